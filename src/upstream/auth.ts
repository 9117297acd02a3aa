/** Upstream auth schemes as data: how a provider's credential becomes request headers. */
import type { CompiledProvider } from '../config/types.js';

const SCHEMES: Record<CompiledProvider['authScheme'], (key: string) => Record<string, string>> = {
  bearer: (key) => ({ authorization: `Bearer ${key}` }),
  'x-api-key': (key) => ({ 'x-api-key': key }),
};

/** The auth headers for a provider; none when it has no credential (the simulator). */
export function authHeaders(provider: CompiledProvider): Record<string, string> {
  return provider.apiKey ? SCHEMES[provider.authScheme](provider.apiKey) : {};
}
