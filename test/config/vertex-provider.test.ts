/**
 * providers/vertex.yaml as the configuration compiles it (issue 32 item 3): url_params fill the
 * host and the paths (VERTEX_PROJECT, VERTEX_LOCATION with its default), VERTEX_BASE_URL replaces the
 * origin, the key file's location is the service-account credential with its token cache, the
 * streaming path and the dialect's body edits; simulated while GOOGLE_APPLICATION_CREDENTIALS is unset.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway, type RawGateway } from '../../src/config/load.js';
import { projectRoot } from '../../src/paths.js';
import { AccessTokens } from '../../src/upstream/google-service-account.js';

const SIM = 'http://127.0.0.1:1';
const KEY_FILE = '/tmp/fake-service-account.json';
const MODELS = '/publishers/anthropic/models/{model}';

describe('the vertex provider manifest', () => {
  let raw: RawGateway;
  beforeAll(async () => { raw = await loadGateway(join(projectRoot(), 'gateway.config.yaml')); });
  const compile = (env: Record<string, string>) => compileGateway(raw, { env, simulatorUrl: SIM });

  it('is simulated while GOOGLE_APPLICATION_CREDENTIALS is unset, at the simulator with placeholder project', async () => {
    const vertex = (await compile({})).providers.get('vertex')!;
    expect(vertex).toMatchObject({ simulated: true, baseUrl: SIM });
    expect(vertex.keys.size).toBe(0);
    expect(vertex.operations.messages!.path).toBe(`/v1/projects/simulated/locations/us-east5${MODELS}:rawPredict`);
  });

  it('fills the region into the host and both paths, sends a bearer token from the key file, edits the body', async () => {
    const vertex = (await compile({ GOOGLE_APPLICATION_CREDENTIALS: KEY_FILE, VERTEX_PROJECT: 'fake-project', VERTEX_LOCATION: 'europe-west1' })).providers.get('vertex')!;
    expect(vertex).toMatchObject({ simulated: false, baseUrl: 'https://europe-west1-aiplatform.googleapis.com', auth: { header: 'authorization', prefix: 'Bearer ' } });
    expect(vertex.auth.tokens).toBeInstanceOf(AccessTokens);
    expect(vertex.auth.tokens!.scope).toBe('https://www.googleapis.com/auth/cloud-platform');
    expect(vertex.keys.any()!.value).toBe(KEY_FILE);
    const op = vertex.operations.messages!;
    expect(op.path).toBe(`/v1/projects/fake-project/locations/europe-west1${MODELS}:rawPredict`);
    expect(op.streamPath).toBe(`/v1/projects/fake-project/locations/europe-west1${MODELS}:streamRawPredict`);
    expect(op.bodyEdits).toEqual({ remove: ['model'], set: { anthropic_version: 'vertex-2023-10-16' } });
  });

  it('defaults the location (us-east5); VERTEX_BASE_URL replaces the origin', async () => {
    const base = { GOOGLE_APPLICATION_CREDENTIALS: KEY_FILE, VERTEX_PROJECT: 'fake-project' };
    expect((await compile(base)).providers.get('vertex')!.baseUrl).toBe('https://us-east5-aiplatform.googleapis.com');
    const global = (await compile({ ...base, VERTEX_LOCATION: 'global', VERTEX_BASE_URL: 'https://aiplatform.googleapis.com' })).providers.get('vertex')!;
    expect(global.baseUrl).toBe('https://aiplatform.googleapis.com');
    expect(global.operations.messages!.path).toBe(`/v1/projects/fake-project/locations/global${MODELS}:rawPredict`);
  });

  it('stays simulated with a key file but no VERTEX_PROJECT (the variable may be set for another Google client)', async () => {
    expect((await compile({ GOOGLE_APPLICATION_CREDENTIALS: KEY_FILE })).providers.get('vertex')!.simulated).toBe(true);
    expect((await compile({ GOOGLE_APPLICATION_CREDENTIALS: KEY_FILE, VERTEX_PROJECT: 'p' })).providers.get('vertex')!.simulated).toBe(false);
  });

  it('keeps the other providers as they were: no stream path, no body edits, no token cache', async () => {
    const anthropic = (await compile({})).providers.get('anthropic')!;
    expect(anthropic.operations.messages).toMatchObject({ path: '/v1/messages', streamPath: null, bodyEdits: null });
    expect(anthropic.auth.tokens).toBeUndefined();
  });
});
