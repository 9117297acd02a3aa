/**
 * A gateway whose vertex provider is live (issue 32 item 3), as the Vertex e2e tests share it: a
 * simulator of its own plays Vertex AI and Google's token endpoint on loopback, a throwaway service
 * account (test/helpers/service-account.ts) is registered there (from then on the simulator's Vertex
 * routes take only the tokens it issued), and the gateway starts with GOOGLE_APPLICATION_CREDENTIALS
 * naming the account's key file, VERTEX_PROJECT, VERTEX_LOCATION and VERTEX_BASE_URL the simulator.
 * Other providers stay on the gateway's built-in simulator (`t.sim`).
 */
import { request } from 'undici';
import { TOKEN_FAULT_KEY } from '../../src/sim/google-oauth.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import type { SimRequest } from './routing.js';
import { createServiceAccount, type TestServiceAccount } from './service-account.js';

/** The project and location the gateway is configured with. */
export const VERTEX_PROJECT = 'fake-project';
export const VERTEX_LOCATION = 'us-east5';

/** What the Vertex simulator received last (GET /__sim/last). */
export interface SimLast { path: string; query: string; headers: Record<string, string>; body: Record<string, any> }

/** The live-Vertex gateway and the simulator behind it. */
export interface LiveVertex {
  /** The simulator playing Vertex and the token endpoint (not the gateway's built-in one). */
  vertex: Simulator;
  sa: TestServiceAccount;
  t: TestGateway;
  /** The last request the Vertex simulator received (a model request, or a token exchange). */
  last(): Promise<SimLast>;
  /** The requests the Vertex simulator logged for an upstream model (or the token endpoint, `google-oauth-token`). */
  requests(model: string): Promise<SimRequest[]>;
  /** Sets a fault on the Vertex simulator for an upstream model (or the token endpoint). */
  fault(model: string, fault: Record<string, unknown>): Promise<void>;
  /** Makes the token endpoint answer `status` until `clearFaults`. */
  failTokens(status?: number): Promise<void>;
  clearFaults(): Promise<void>;
  dispose(): Promise<void>;
}

async function simCall(url: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const res = await request(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`simulator ${path} answered ${res.statusCode}: ${text}`);
  return JSON.parse(text);
}

/** Starts the simulator, the account and the gateway (with `configFile`, default the project's configuration). */
export async function startLiveVertex(opts: { configFile?: string } = {}): Promise<LiveVertex> {
  const vertex = await startSimulator();
  let sa: TestServiceAccount | undefined;
  try {
    sa = await createServiceAccount(vertex.url);
    const t = await startTestGateway({
      configFile: opts.configFile,
      env: { GOOGLE_APPLICATION_CREDENTIALS: sa.path, VERTEX_PROJECT, VERTEX_LOCATION, VERTEX_BASE_URL: vertex.url },
    });
    const account = sa;
    return {
      vertex, sa, t,
      last: async () => (await simCall(vertex.url, 'GET', '/__sim/last')) as SimLast,
      requests: async (model) => ((await simCall(vertex.url, 'GET', `/__sim/requests?model=${encodeURIComponent(model)}`)) as { data: SimRequest[] }).data,
      fault: async (model, fault) => { await simCall(vertex.url, 'POST', '/__sim/faults', { model, fault }); },
      failTokens: async (status = 500) => { await simCall(vertex.url, 'POST', '/__sim/faults', { model: TOKEN_FAULT_KEY, fault: { status } }); },
      clearFaults: async () => { await simCall(vertex.url, 'DELETE', '/__sim/faults'); },
      dispose: async () => { await t.dispose(); await vertex.close(); await account.dispose(); },
    };
  } catch (error) {
    await vertex.close();
    await sa?.dispose();
    throw error;
  }
}

/** POSTs JSON to the gateway with `key`; the status and the parsed answer (an error's body for a refused request). */
export async function postJson(t: TestGateway, key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  const res = await request(`${t.url}${path}`, {
    method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
  });
  return { status: res.statusCode, headers: res.headers, body: await res.body.json() };
}
