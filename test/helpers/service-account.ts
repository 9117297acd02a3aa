/**
 * A throwaway Google service account for the tests (issue 32 item 3): an RSA key pair generated at
 * run time, written as a key file whose token_uri is a simulator's token endpoint, and registered
 * there with its public key. Obviously fake (project `fake-project`, key id `fake-key-id`); nothing
 * of it is committed.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';

/** A key file on disk and what the simulator was told about it. */
export interface TestServiceAccount {
  /** The key file's path (what GOOGLE_APPLICATION_CREDENTIALS names). */
  path: string;
  clientEmail: string;
  publicKey: string;
  /** Tells the simulator how long its tokens last, and whether its token answers wait for POST /__sim/release. */
  configure(opts: { expiresIn?: number; hold?: boolean }): Promise<void>;
  /** The token exchanges the simulator received so far (its request log). */
  tokenRequests(): Promise<number>;
  dispose(): Promise<void>;
}

/** Creates the account for the simulator at `simUrl` (tokens last `expiresIn` seconds, default 3600). */
export async function createServiceAccount(simUrl: string, opts: { expiresIn?: number; tokenUri?: string } = {}): Promise<TestServiceAccount> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const dir = await mkdtemp(join(tmpdir(), 'gw-sa-'));
  const clientEmail = `gateway-test-${Math.random().toString(36).slice(2, 8)}@fake-project.iam.gserviceaccount.com`;
  const path = join(dir, 'fake-service-account.json');
  const key = {
    type: 'service_account', project_id: 'fake-project', private_key_id: 'fake-key-id', private_key: privateKey,
    client_email: clientEmail, client_id: '000000000000000000000', token_uri: opts.tokenUri ?? `${simUrl}/token`,
  };
  await writeFile(path, JSON.stringify(key, null, 2));
  const sim = async (method: 'GET' | 'POST', route: string, body?: unknown): Promise<any> => {
    const res = await request(`${simUrl}${route}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`simulator ${route} answered ${res.statusCode}: ${text}`);
    return JSON.parse(text);
  };
  const account: TestServiceAccount = {
    path, clientEmail, publicKey,
    configure: async ({ expiresIn, hold }) => { await sim('POST', '/__sim/google/accounts', { client_email: clientEmail, public_key: publicKey, expires_in: expiresIn, hold }); },
    tokenRequests: async () => ((await sim('GET', '/__sim/requests?model=google-oauth-token')).data as unknown[]).length,
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
  await account.configure({ expiresIn: opts.expiresIn });
  return account;
}
