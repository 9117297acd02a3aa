/**
 * The simulator's Claude on Vertex routes and Google token endpoint (issue 32 item 3), by raw HTTP:
 * the bearer token it issued is required once a service account is registered (none needed before:
 * the keyless simulation), the dialect is checked strictly, and the answer is the messages format.
 */
import { createSign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { createServiceAccount, type TestServiceAccount } from '../helpers/service-account.js';
import { simCall, streamNamed } from './helpers.js';

const PREDICT = '/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5@20251001';
const BODY = { anthropic_version: 'vertex-2023-10-16', max_tokens: 30, messages: [{ role: 'user', content: 'Hello Vertex' }] };

/** A JWT-bearer grant body for `claims`, signed with the key file's private key. */
async function grant(account: TestServiceAccount, claims: Record<string, unknown>): Promise<string> {
  const key = JSON.parse(await readFile(account.path, 'utf8')) as { private_key: string };
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key.private_key).toString('base64url');
  return new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: `${unsigned}.${signature}` }).toString();
}

describe('simulated Vertex AI', () => {
  let sim: Simulator;
  beforeAll(async () => { sim = await startSimulator(); });
  afterAll(async () => { await sim?.close(); });

  it('answers rawPredict in the messages format, without a token while no account is registered', async () => {
    const res = await simCall(sim.url, `${PREDICT}:rawPredict`, 'POST', BODY);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-haiku-4-5@20251001', usage: { input_tokens: expect.any(Number) } });
  });

  it('streams streamRawPredict as Anthropic events', async () => {
    const res = await streamNamed(sim.url, `${PREDICT}:streamRawPredict`, { ...BODY, stream: true });
    expect(res.status).toBe(200);
    expect(res.events[0]!.event).toBe('message_start');
    expect(res.events.at(-1)!.event).toBe('message_stop');
  });

  it('checks the dialect: anthropic_version, no model in the body, stream matching the method', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      [':rawPredict', { ...BODY, anthropic_version: '2023-06-01' }, /anthropic_version/],
      [':rawPredict', { ...BODY, model: 'claude-haiku-4-5' }, /model/],
      [':rawPredict', { ...BODY, stream: true }, /streamRawPredict/],
      [':streamRawPredict', BODY, /stream/],
    ];
    for (const [verb, body, message] of cases) {
      const res = await simCall(sim.url, `${PREDICT}${verb}`, 'POST', body);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(message) });
    }
  });

  describe('with a registered service account', () => {
    let account: TestServiceAccount;
    const aud = () => `${sim.url}/token`;
    const claims = (over: Record<string, unknown> = {}) => {
      const iat = Math.floor(Date.now() / 1000);
      return { iss: account.clientEmail, scope: 'https://www.googleapis.com/auth/cloud-platform', aud: aud(), iat, exp: iat + 3600, ...over };
    };
    const exchange = async (body: string) => simCall(sim.url, '/token', 'POST', body, { 'content-type': 'application/x-www-form-urlencoded' });
    beforeAll(async () => { account = await createServiceAccount(sim.url, { expiresIn: 1800 }); });
    afterAll(async () => { await account?.dispose(); });

    it('issues a token for a good assertion, which rawPredict then requires', async () => {
      const issued = await exchange(await grant(account, claims()));
      expect(issued.status).toBe(200);
      expect(issued.json).toMatchObject({ access_token: expect.stringMatching(/^ya29\.sim-/), expires_in: 1800, token_type: 'Bearer' });
      expect((await simCall(sim.url, `${PREDICT}:rawPredict`, 'POST', BODY)).status).toBe(401);
      const wrong = await simCall(sim.url, `${PREDICT}:rawPredict`, 'POST', BODY, { authorization: 'Bearer ya29.not-issued' });
      expect(wrong.status).toBe(401);
      expect(wrong.json.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      const ok = await simCall(sim.url, `${PREDICT}:rawPredict`, 'POST', BODY, { authorization: `Bearer ${issued.json.access_token}` });
      expect(ok.status).toBe(200);
    });

    it('refuses assertions with the wrong audience, scope, times or issuer, and a wrong grant type', async () => {
      const now = Math.floor(Date.now() / 1000);
      const bad = [
        claims({ aud: 'https://oauth2.googleapis.com/token' }),
        claims({ scope: 'https://www.googleapis.com/auth/devstorage.read_only' }),
        claims({ iat: now - 7200, exp: now - 3600 }),
        claims({ exp: now + 7200 }),
        claims({ iss: 'someone-else@fake-project.iam.gserviceaccount.com' }),
      ];
      for (const c of bad) {
        const res = await exchange(await grant(account, c));
        expect(res.status, JSON.stringify(c)).toBe(400);
        expect(res.json.error).toBe('invalid_grant');
      }
      const body = (await grant(account, claims())).replace('jwt-bearer', 'saml2-bearer');
      expect((await exchange(body)).status).toBe(400);
    });
  });
});
