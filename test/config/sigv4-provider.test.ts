/**
 * A sigv4 provider's configuration (issue 32 item 2), compiled from providers/bedrock.yaml: simulated
 * while its secret is unset (signed for the simulator's region), else its regional endpoint from the
 * `{AWS_REGION}` placeholder unless BEDROCK_BASE_URL overrides it, with the region, access key id and
 * optional session token it signs with; a secret without its region or access key id is refused naming
 * the variable. An operation's `stream_operation` must name a streaming operation of the same format.
 * The model is named in the path as every provider's is, `{model}`: the retired `path_model` is refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { compileProvider } from '../../src/config/providers.js';
import type { ProviderManifest } from '../../src/generated/manifest-types.js';
import { projectRoot } from '../../src/paths.js';
import { copyConfig } from '../helpers/config.js';

const FILE = 'providers/bedrock.yaml';
const manifest = (): ProviderManifest => parse(readFileSync(join(projectRoot(), FILE), 'utf8')) as ProviderManifest;
const SECRET = { AWS_SECRET_ACCESS_KEY: 'fake-secret', AWS_ACCESS_KEY_ID: 'AKIAFAKEFORTESTS0000', AWS_REGION: 'eu-west-3' };
const compile = (env: Record<string, string>, m: ProviderManifest = manifest()) => compileProvider(FILE, m, { env, simulatorUrl: 'http://127.0.0.1:9' });

describe('a sigv4 provider', () => {
  it('keyless: the simulator, signed for the default region with the simulator credentials', () => {
    const p = compile({});
    expect(p.simulated).toBe(true);
    expect(p.baseUrl).toBe('http://127.0.0.1:9');
    expect(p.sigv4).toEqual({ service: 'bedrock', region: 'us-east-1', accessKeyId: '', simulated: true });
    expect(p.operations.converse).toMatchObject({ path: '/model/{model}/converse', streamOperation: 'converse-stream', answer: 'json' });
    expect(p.operations['converse-stream']).toMatchObject({ path: '/model/{model}/converse-stream', answer: 'event-stream', headers: { accept: 'application/vnd.amazon.eventstream' } });
  });

  it('a manifest still carrying path_model is refused, naming the file, the operation and the key', async () => {
    const copy = await copyConfig();
    await copy.editYaml(FILE, (d) => { d.operations.converse.path = '/model/{modelId}/converse'; d.operations.converse.path_model = 'modelId'; });
    const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' })).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect(error).toMatchObject({ file: FILE, path: '/operations/converse', reason: 'unknown key "path_model"' });
    expect((error as ManifestError).message).toMatch(/^providers\/bedrock\.yaml:\d+: \/operations\/converse: unknown key "path_model"$/);
  });

  it('configured: the region fills the endpoint; the session token is kept; BEDROCK_BASE_URL overrides', () => {
    const p = compile({ ...SECRET, AWS_SESSION_TOKEN: 'fake-token' });
    expect(p.baseUrl).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com');
    expect(p.sigv4).toEqual({ service: 'bedrock', region: 'eu-west-3', accessKeyId: 'AKIAFAKEFORTESTS0000', sessionToken: 'fake-token', simulated: false });
    expect(p.keys.any()?.value).toBe('fake-secret');
    expect(compile({ ...SECRET, BEDROCK_BASE_URL: 'http://127.0.0.1:4000/' }).baseUrl).toBe('http://127.0.0.1:4000');
  });

  it('a secret without its region stays simulated; with the region, without its access key id, is refused', () => {
    // The AWS keys are also the S3 blob store's: without AWS_REGION (the endpoint's url_params, and the
    // signature's scope) they do not turn Bedrock live, even with BEDROCK_BASE_URL.
    expect(compile({ AWS_SECRET_ACCESS_KEY: 'x', AWS_ACCESS_KEY_ID: 'y' }).simulated).toBe(true);
    expect(compile({ AWS_SECRET_ACCESS_KEY: 'x', AWS_ACCESS_KEY_ID: 'y', BEDROCK_BASE_URL: 'http://127.0.0.1:1' }).simulated).toBe(true);
    expect(() => compile({ AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' })).toThrow(/\/auth\/sigv4\/access_key_id: AWS_ACCESS_KEY_ID must be set/);
  });

  it('stream_operation must name a streaming operation of the same format', () => {
    const unknown = manifest();
    unknown.operations.converse!.stream_operation = 'nope';
    expect(() => compile({}, unknown)).toThrow(/\/operations\/converse\/stream_operation: "nope" must be an operation of this provider in format bedrock-converse that answers sse or event-stream/);
    const json = manifest();
    delete json.operations['converse-stream']!.answer;
    expect(() => compile({}, json)).toThrow(/stream_operation: "converse-stream" must be/);
  });
});
