/**
 * The simulator's SigV4 check (src/sim/bedrock-auth.ts): a request signed with the simulator's fake
 * credentials, by the gateway's signer or by AWS's own (@smithy/signature-v4, with or without a session
 * token), is accepted as received; a changed body, path, query or signed header, another secret, an
 * unknown key, another service and a missing signature are refused with Bedrock's error types.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { verifySigV4 } from '../../src/sim/bedrock-auth.js';
import { signV4 } from '../../src/upstream/sigv4.js';
import { SIMULATOR_AWS_CREDENTIALS } from '../../src/upstream/sigv4-auth.js';

const HOST = '127.0.0.1:8089';
const PATH = '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse';
const BODY = Buffer.from('{"messages":[{"role":"user","content":[{"text":"hé"}]}]}');
const NOW = new Date('2026-12-03T10:15:00Z');

/** Headers as node:http hands them to the simulator (lower-case names). */
function received(own: Record<string, string>, signed: Record<string, string>): http.IncomingHttpHeaders {
  return Object.fromEntries(Object.entries({ host: HOST, ...own, ...signed }).map(([k, v]) => [k.toLowerCase(), v]));
}

function ours(secret = SIMULATOR_AWS_CREDENTIALS.secretAccessKey, path = PATH, service = 'bedrock'): http.IncomingHttpHeaders {
  const own = { 'content-type': 'application/json', accept: 'application/json' };
  const signed = signV4({ method: 'POST', url: new URL(`http://${HOST}${path}`), headers: own, body: BODY }, { accessKeyId: SIMULATOR_AWS_CREDENTIALS.accessKeyId, secretAccessKey: secret }, 'us-east-1', service, NOW);
  return received(own, signed);
}

describe('the simulator verifies SigV4', () => {
  it('accepts the gateway signer and AWS own signer (a session token signed too)', async () => {
    expect(verifySigV4('POST', PATH, ours(), BODY, 'bedrock')).toBeNull();
    for (const sessionToken of [undefined, 'FAKE-SESSION-TOKEN']) {
      const signer = new SignatureV4({ credentials: { ...SIMULATOR_AWS_CREDENTIALS, ...(sessionToken ? { sessionToken } : {}) }, region: 'eu-west-1', service: 'bedrock', sha256: Sha256 });
      const request = await signer.sign({ method: 'POST', protocol: 'http:', hostname: '127.0.0.1', port: 8089, path: PATH, query: { a: 'b c' }, headers: { host: HOST, 'content-type': 'application/json', 'amz-sdk-request': 'attempt=1; max=1' }, body: BODY }, { signingDate: NOW });
      expect(verifySigV4('POST', `${PATH}?a=b%20c`, received({}, request.headers), BODY, 'bedrock')).toBeNull();
      expect(verifySigV4('POST', `${PATH}?a=b%20d`, received({}, request.headers), BODY, 'bedrock')?.type).toBe('InvalidSignatureException');
    }
  });

  it('refuses what was changed, another secret, key or service, and no signature', () => {
    const invalid = { type: 'InvalidSignatureException', message: expect.stringMatching(/does not match/) };
    expect(verifySigV4('POST', PATH, ours(), Buffer.from(`${BODY.toString()} `), 'bedrock')).toEqual(invalid);
    expect(verifySigV4('POST', PATH.replace('converse', 'converse-stream'), ours(), BODY, 'bedrock')).toEqual(invalid);
    expect(verifySigV4('POST', PATH, { ...ours(), 'content-type': 'text/plain' }, BODY, 'bedrock')).toEqual(invalid);
    expect(verifySigV4('POST', PATH, ours('another-secret'), BODY, 'bedrock')).toEqual(invalid);
    expect(verifySigV4('POST', PATH, ours(undefined, PATH, 'bedrock-agent'), BODY, 'bedrock')).toMatchObject({ type: 'InvalidSignatureException', message: expect.stringMatching(/scoped to correct service/) });
    const unknown = ours();
    unknown.authorization = String(unknown.authorization).replace(SIMULATOR_AWS_CREDENTIALS.accessKeyId, 'AKIAUNKNOWNKEY000000');
    expect(verifySigV4('POST', PATH, unknown, BODY, 'bedrock')?.type).toBe('UnrecognizedClientException');
    const { authorization: _, ...unsigned } = ours();
    expect(verifySigV4('POST', PATH, unsigned, BODY, 'bedrock')?.type).toBe('MissingAuthenticationTokenException');
  });
});
