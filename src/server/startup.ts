/**
 * What a started gateway runs on, for the start line (issue 8 item 7): the store (embedded folder, or
 * PostgreSQL host and database, never a password), the limiter backend, whether the admin API is on,
 * and each provider as live (with its base URL's host) or simulated.
 */
import type { CompiledGateway } from '../config/types.js';

/** The facts the start line names. */
export interface StartupFacts {
  store: string;
  limiter: string;
  adminApi: boolean;
  providers: Array<{ id: string; simulated: boolean; host: string }>;
}

/** "embedded PGlite at <folder>", "in-memory PGlite", or "PostgreSQL <host:port>/<database>". */
export function describeStore(databaseUrl: string | undefined, dataDir: string): string {
  if (!databaseUrl) return dataDir === ':memory:' ? 'in-memory PGlite (nothing kept)' : `embedded PGlite at ${dataDir}`;
  try {
    const url = new URL(databaseUrl);
    return `PostgreSQL ${url.host || 'localhost'}${url.pathname || '/'}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL is not a URL)';
  }
}

/** Each provider of the configuration, live or simulated. */
export function describeProviders(gateway: CompiledGateway): StartupFacts['providers'] {
  return [...gateway.providers.values()].map((p) => ({ id: p.id, simulated: p.simulated, host: new URL(p.baseUrl).host }));
}

/** One line: `store ... · limiter ... · admin API on|off · providers: a live (host), b simulated`. */
export function startupLine(facts: StartupFacts): string {
  const providers = facts.providers.map((p) => (p.simulated ? `${p.id} simulated` : `${p.id} live (${p.host})`)).join(', ');
  return `store ${facts.store} · limiter ${facts.limiter} · admin API ${facts.adminApi ? 'on' : 'off (set GATEWAY_ADMIN_TOKEN)'} · providers: ${providers || 'none'}`;
}
