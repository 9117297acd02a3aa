/**
 * A client program typed only by the gateway's OpenAPI document: `./schema.js` is the declaration
 * file openapi-typescript generates from GET /openapi.json during the test run
 * (test/e2e/openapi-client.test.ts), so this file type-checks only while the document describes
 * these calls. It uses openapi-fetch for every call: the admin API (account, key, top-up, usage),
 * a JSON route, a multipart upload and a binary download. Compiled by the test, not by
 * tsconfig.test.json (the declaration file does not exist before the test writes it).
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];

/** What the program did, for the test to check. */
export interface ClientRun {
  health: Schemas['Health'];
  ready: Schemas['Readiness'];
  account: Schemas['AdminAccountCreated'];
  toppedUp: Schemas['AdminAccount'];
  secondKey: Schemas['AdminKey'];
  rotated: Schemas['AdminKey'];
  chat: Schemas['ChatCompletion'];
  upload: Schemas['FileMetadata'];
  speech: { bytes: Uint8Array; contentType: string | null };
  missing: { status: number; error: Schemas['AdminError'] | undefined };
}

/** The account as the admin API reports it after the calls. */
export interface ClientReadBack {
  usage: Schemas['AdminUsagePage'];
  account: Schemas['AdminAccount'];
}

/** Fails with the call's status and error body. */
function must<T>(what: string, result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

/** The multipart body of a form route: each field as a form part, a Blob as a file part. */
function formData(body: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    if (value instanceof Blob) form.append(name, value, `${name}.txt`);
    else if (value !== undefined) form.append(name, String(value));
  }
  return form;
}

/** Runs the calls against the gateway at `baseUrl`, with the admin token for the admin API. */
export async function runClient(baseUrl: string, adminToken: string): Promise<ClientRun> {
  const open = createClient<paths>({ baseUrl });
  const admin = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${adminToken}` } });

  const health = must('healthz', await open.GET('/healthz'));
  const ready = must('readyz', await open.GET('/readyz'));

  const account = must('create account', await admin.POST('/admin/accounts', { body: { balance_usd: '1', credit_limit_usd: '0' } }));
  const toppedUp = must('top up', await admin.POST('/admin/accounts/{id}/topups', { params: { path: { id: account.id } }, body: { amount_usd: '2.5' } }));
  const secondKey = must('create key', await admin.POST('/admin/accounts/{id}/keys', { params: { path: { id: account.id } } }));
  const rotated = must('rotate key', await admin.POST('/admin/keys/{key_id}/rotate', { params: { path: { key_id: secondKey.id } } }));

  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${account.key}` } });
  const answered = must('chat', await api.POST('/v1/chat/completions', {
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello in three words.' }], max_tokens: 32 },
  }));
  // The route also answers server-sent events (text/event-stream, a string) when `stream` is set.
  if (typeof answered === 'string') throw new Error('chat: a stream answered a request without `stream`');
  const chat = answered;
  const upload = must('upload', await api.POST('/v1/files', {
    params: { header: { 'anthropic-version': '2023-06-01' } },
    body: { file: new Blob(['a small text file for the messages-format files API'], { type: 'text/plain' }), expires_in_seconds: 3600 },
    bodySerializer: formData,
  }));
  const spoken = await api.POST('/v1/audio/speech', {
    body: { model: 'tts-1', voice: 'alloy', input: 'Hello from the typed client.' },
    parseAs: 'arrayBuffer',
  });
  const speech = { bytes: new Uint8Array(must('speech', spoken)), contentType: spoken.response.headers.get('content-type') };

  const gone = await admin.GET('/admin/accounts/{id}', { params: { path: { id: 'acct_does_not_exist' } } });
  return { health, ready, account, toppedUp, secondKey, rotated, chat, upload, speech, missing: { status: gone.response.status, error: gone.error } };
}

/** The account's usage rows spent by `keyId` and its balance, through the admin API. */
export async function readBack(baseUrl: string, adminToken: string, accountId: string, keyId: string): Promise<ClientReadBack> {
  const admin = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${adminToken}` } });
  const usage = must('usage', await admin.GET('/admin/accounts/{id}/usage', { params: { path: { id: accountId }, query: { limit: 50, key_id: keyId } } }));
  const account = must('account', await admin.GET('/admin/accounts/{id}', { params: { path: { id: accountId } } }));
  return { usage, account };
}
