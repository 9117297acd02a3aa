/**
 * A provider's `url_params` (issue 32 item 3): values of its URL known at configuration time (a
 * cloud project, a region), each `{name}` of the base URL's default and of the operation paths
 * filled from its env variable or its default when the manifest is compiled. `{model}` is not one:
 * it is the offering's upstream model, filled per request (src/upstream/client.ts).
 */
import type { ProviderManifest } from '../generated/manifest-types.js';
import { ManifestError } from './errors.js';

/** The value put in for a parameter with none while the provider is simulated (its URL is the simulator's). */
export const SIMULATED_PARAM = 'simulated';

/** The path parameter every operation may name without `url_params` or a route's `path_params`. */
export const MODEL_PARAM = 'model';

/** The manifest's url_params resolved: name to value (URL-encoded). */
export type UrlParams = Readonly<Record<string, string>>;

/**
 * Each url_params entry's value from `env` (or its default). One with neither is an error unless
 * `simulated`; `model` is refused as a name (it is the offering's). `credential` names what was set.
 */
export function resolveUrlParams(file: string, m: ProviderManifest, env: NodeJS.ProcessEnv, simulated: boolean, credential: string): UrlParams {
  const out: Record<string, string> = {};
  for (const [name, p] of Object.entries(m.url_params ?? {})) {
    if (name === MODEL_PARAM) throw new ManifestError(file, `/url_params/${name}`, `{${MODEL_PARAM}} is the offering's upstream_model; name this parameter otherwise`);
    const value = env[p.env] || p.default;
    if (!value && !simulated) throw new ManifestError(file, `/url_params/${name}`, `${p.env} must be set when ${credential} is`);
    out[name] = encodeURIComponent(value || SIMULATED_PARAM);
  }
  return out;
}

/** `text` with each `{name}` of `params` replaced by its value; other `{...}` are left for the request. */
export function fillUrlParams(text: string, params: UrlParams): string {
  return text.replace(/\{([^}/]+)\}/g, (whole, name: string) => params[name] ?? whole);
}
