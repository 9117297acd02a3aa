/**
 * AWS Signature Version 4 (issue 32 item 2): AWS's own test vector (the SigV4 test suite's
 * get-vanilla), then random Bedrock-shaped requests signed alike by the gateway and by the AWS SDK's
 * signer (@smithy/signature-v4, a dependency of the S3 client): model ids with `:` in the path, query
 * strings, session tokens, bodies of any bytes.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signV4 } from '../../src/upstream/sigv4.js';

const EXAMPLE = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

describe('SigV4', () => {
  it("signs AWS's get-vanilla test vector", () => {
    // The suite's request signs host and x-amz-date only (the payload hash header left out).
    const headers = signV4({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, body: '' }, EXAMPLE, 'us-east-1', 'service', new Date('2015-08-30T12:36:00Z'), { payloadHashHeader: false });
    expect(headers).toEqual({
      'x-amz-date': '20150830T123600Z',
      authorization: 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    });
  });

  it('signs Bedrock requests exactly as the AWS SDK does', async () => {
    const modelId = fc.constantFrom('anthropic.claude-sonnet-4-5-20250929-v1:0', 'us.amazon.nova-pro-v1:0', 'meta.llama3-3-70b-instruct-v1:0', 'mistral.mistral-large-2407-v1:0');
    await fc.assert(fc.asyncProperty(modelId, fc.boolean(), fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }), fc.uint8Array({ maxLength: 300 }), fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }),
      async (model, stream, token, body, now) => {
        const credentials = { ...EXAMPLE, ...(token ? { sessionToken: token.replace(/\s/g, 'x') } : {}) };
        const path = `/model/${encodeURIComponent(model)}/${stream ? 'converse-stream' : 'converse'}`;
        const hostname = 'bedrock-runtime.eu-west-3.amazonaws.com';
        const base = { 'content-type': 'application/json', accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json' };
        const ours = signV4({ method: 'POST', url: new URL(`https://${hostname}${path}?trace=on`), headers: base, body }, credentials, 'eu-west-3', 'bedrock', now);
        const signer = new SignatureV4({ credentials, region: 'eu-west-3', service: 'bedrock', sha256: Sha256 });
        const theirs = await signer.sign({ method: 'POST', protocol: 'https:', hostname, path, query: { trace: 'on' }, headers: { ...base, host: hostname }, body }, { signingDate: now });
        expect(ours.authorization).toBe(theirs.headers.authorization);
        expect(ours['x-amz-date']).toBe(theirs.headers['x-amz-date']);
        expect(ours['x-amz-content-sha256']).toBe(theirs.headers['x-amz-content-sha256']);
        expect(ours['x-amz-security-token']).toBe(theirs.headers['x-amz-security-token']);
      }), { numRuns: 60 });
  });
});
