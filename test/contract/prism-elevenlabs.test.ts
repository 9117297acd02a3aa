/**
 * Contract for the ElevenLabs routes (issue 11 items 2 and 3; docs/vendors/elevenlabs.md): Prism plays
 * ElevenLabs from its published spec (../shared/specs/elevenlabs/openapi.json) behind a gateway that
 * holds a real-looking key, and every request the gateway sends for speech and sound effects must
 * reach the documented path with the `xi-api-key` header and pass Prism's validation with no
 * violation. Prism's 200 answers are placeholders (not MP3 audio), so the client's status is not the
 * point here; the simulator and the end-to-end tests check answers and billing. Prism only validates
 * a body whose schema its Ajv compiles: the first test compiles both operations' bodies as Prism does.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { compilePrismRequestBodies, gatewayRequestAsLogged, logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismProcess } from '../helpers/prism.js';

const SPEC = resolve(projectRoot(), '../shared/specs/elevenlabs/openapi.json');
/** The newer copy of the spec (tryAGI mirror, 2026-08-22): the same two operations, `SFXModelId`, and bounds on stability and similarity_boost. */
const NEWER_SPEC = resolve(projectRoot(), '../shared/specs/elevenlabs/openapi.api-elevenlabs-io.2026-08-22.json');
const OPERATIONS = ['POST /v1/text-to-speech/{voice_id}', 'POST /v1/sound-generation'];

describe.runIf(storeKind === 'pglite')('Prism vendor contract: ElevenLabs requests validate against the vendor spec', () => {
  let prism: PrismProcess;
  let t: TestGateway;
  let key: string;

  beforeAll(async () => {
    prism = await startPrismMock(SPEC);
    t = await startTestGateway({ env: { ELEVENLABS_API_KEY: 'xi-test-not-real', ELEVENLABS_BASE_URL: prism.url } });
    key = (await t.account('5')).key;
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await stopChild(prism?.child);
  }, 60_000);

  it.each([['openapi.json', SPEC], ['the 2026-08-22 copy', NEWER_SPEC]])('compiles both operations\' request bodies of %s as Prism does (none skipped)', async (_name, spec) => {
    const bodies = await compilePrismRequestBodies(spec, (op) => OPERATIONS.includes(`${op.method} ${op.path}`));
    expect(bodies.filter((b) => b.mediaType === 'application/json').map((b) => `${b.method} ${b.path}`).sort()).toEqual([...OPERATIONS].sort());
    expect(bodies.filter((b) => b.error).map((b) => `${b.method} ${b.path}: ${b.error}`)).toEqual([]);
  }, 120_000);

  it('speech: POST /v1/text-to-speech/{voice_id} with the mapped voice id, the vendor model, voice_settings and the key', async () => {
    const body = { model: 'eleven_multilingual_v2', voice: 'rachel', input: 'Hello there.', stability: 0.3, similarity_boost: 0.9, style: 0.1, speed: 1.2, use_speaker_boost: true };
    const { logged } = await gatewayRequestAsLogged(t.url, key, prism, '/v1/audio/speech', body, '/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM');
    const log = logged.lines.join('\n');
    expect(log).toContain('xi-api-key: xi-test-not-real');
    expect(logged.body).toEqual({ text: 'Hello there.', model_id: 'eleven_multilingual_v2', voice_settings: { stability: 0.3, similarity_boost: 0.9, style: 0.1, speed: 1.2, use_speaker_boost: true } });
  });

  it('speech without settings, on v3 and flash: no voice_settings at all', async () => {
    for (const model of ['eleven_v3', 'eleven_flash_v2_5']) {
      const { logged } = await gatewayRequestAsLogged(t.url, key, prism, '/v1/audio/speech', { model, voice: 'george', input: 'Plain.' }, '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb');
      expect(logged.body).toEqual({ text: 'Plain.', model_id: model });
    }
  });

  it('sound effects: POST /v1/sound-generation with text, duration_seconds, loop and prompt_influence', async () => {
    for (const duration of [0.5, 30]) {
      const body = { prompt: 'Footsteps on gravel.', duration_seconds: duration, loop: false, prompt_influence: 0.3 };
      const { logged } = await gatewayRequestAsLogged(t.url, key, prism, '/v1/audio/sound-effects', body, '/v1/sound-generation');
      expect(logged.lines.join('\n')).toContain('xi-api-key: xi-test-not-real');
      expect(logged.body).toEqual({ text: 'Footsteps on gravel.', model_id: 'eleven_text_to_sound_v2', duration_seconds: duration, loop: false, prompt_influence: 0.3 });
    }
  });

  it('a placeholder answer that is not an MP3 is the upstream\'s fault: 502, nothing charged', async () => {
    const account = await t.account('1');
    const res = await fetch(`${t.url}/v1/audio/sound-effects`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'x', duration_seconds: 1 }) });
    await res.arrayBuffer();
    expect(res.status).toBe(502);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n, heldNano: 0n });
  });

  it('negative control: Prism rejects a body without the required text, so the passes above mean something', async () => {
    const mark = logMark(prism);
    const res = await fetch(`${prism.url}/v1/sound-generation`, { method: 'POST', headers: { 'content-type': 'application/json', 'xi-api-key': 'k' }, body: JSON.stringify({ duration_seconds: 1 }) });
    await res.text();
    const [logged] = await loggedRequestsSince(prism, mark, 1);
    expect(res.status).toBe(422);
    expect(logged!.passed).toBe(false);
    expect(logged!.lines.join('\n')).toMatch(/text/);
  });
});
