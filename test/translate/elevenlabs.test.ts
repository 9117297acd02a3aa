/**
 * The ElevenLabs translators beyond their golden fixtures (docs/vendors/elevenlabs.md), and the engine
 * pieces the speech and sound-effects routes added: the `map` parameter policy (the voice table and
 * the mp3-only format of spec 4.8), a model's own policies (the voice-settings matrix), and a meter's
 * `step` (half-second billing of sound effects, spec 1 and 8).
 */
import { describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import { quantityCharge, quantityHold } from '../../src/meters/quantity-meter.js';
import { elevenlabsError, looksLikeMp3 } from '../../src/translate/elevenlabs.js';
import { applyParamPolicies } from '../../src/translate/params.js';
import { createTranslator } from '../../src/translate/registry.js';

const tts = (body: Record<string, unknown>) => createTranslator('native-json', 'elevenlabs-tts', { model: 'eleven_v3', input: 'x', voice: 'v', ...body }, 'eleven_v3');
const sfx = () => createTranslator('native-json', 'elevenlabs-sound-generation', { prompt: 'x', duration_seconds: 1 }, 'eleven_text_to_sound_v2');

function refusal(run: () => unknown): GatewayError {
  try { run(); } catch (error) { return error as GatewayError; }
  throw new Error('accepted');
}

describe('ElevenLabs translators', () => {
  it('refuses voice instructions when created (before anything is reserved)', () => {
    expect(refusal(() => tts({ instructions: 'whisper' }))).toMatchObject({ code: 'unsupported_parameter', status: 400, message: 'Voice instructions are not supported.', extra: { param: 'instructions' } });
    expect(() => tts({ instructions: null })).not.toThrow();
  });

  it('sends MP3 bytes back as audio/mpeg, and refuses anything else as the upstream\'s fault (502, not billed)', () => {
    const frame = Buffer.from([0xff, 0xfb, 0x90, 0xc4, 0, 0]);
    expect(looksLikeMp3(frame)).toBe(true);
    expect(looksLikeMp3(Buffer.from('ID3\x04\x00'))).toBe(true);
    expect(looksLikeMp3(Buffer.from('{"detail":'))).toBe(false);
    expect(looksLikeMp3(Buffer.alloc(0))).toBe(false);
    expect(sfx().file!(frame, {}, 'm')).toEqual({ data: frame, contentType: 'audio/mpeg', filename: null });
    expect(refusal(() => tts({}).file!(Buffer.from('RIFF....WAVE'), {}, 'm'))).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(refusal(() => sfx().response({}, 'm'))).toMatchObject({ code: 'upstream_error' });
    expect(refusal(() => sfx().stream('m'))).toMatchObject({ code: 'invalid_request' });
  });

  it('shows a request error\'s own message from either vendor shape, never an authentication text', () => {
    const validation = elevenlabsError(422, { detail: [{ loc: ['body', 'duration_seconds'], msg: 'Value must be between 0.5 and 30', type: 'value_error' }] }, {});
    expect(validation).toMatchObject({ code: 'invalid_request', status: 400, message: 'duration_seconds: Value must be between 0.5 and 30' });
    expect(elevenlabsError(404, { detail: { status: 'voice_not_found', message: 'A voice with voice_id x does not exist.' } }, {}).message).toBe('A voice with voice_id x does not exist.');
    const auth = elevenlabsError(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key sk_abc123' } }, {});
    expect(auth).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(auth.message).not.toContain('sk_abc123');
    expect(elevenlabsError(429, null, { 'retry-after': '7' })).toMatchObject({ code: 'upstream_rate_limited', extra: { headers: { 'retry-after': '7' } } });
    expect(elevenlabsError(500, { detail: 'boom' }, {})).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(elevenlabsError(400, 'not json', {}).message).toBe('The upstream provider rejected the request (HTTP 400).');
  });
});

describe('the map parameter policy', () => {
  const policies = { voice: { map: { george: 'JBFqnCBsd6RMkjVDRZzb', bella: 'EXAVITQu4vr4xnSDxMaL' } }, response_format: { default: 'mp3', map: { mp3: 'mp3_44100_128' } } };

  it('turns an accepted value into its upstream value, after the default, without touching the client body', () => {
    const body = { voice: 'george' };
    expect(applyParamPolicies(body, policies, 'x')).toEqual({ voice: 'JBFqnCBsd6RMkjVDRZzb', response_format: 'mp3_44100_128' });
    expect(body).toEqual({ voice: 'george' });
  });

  it('refuses any other value with a 400 naming the accepted ones (never an inherited key)', () => {
    expect(refusal(() => applyParamPolicies({ voice: 'alloy' }, policies, 'x'))).toMatchObject({ code: 'invalid_request', message: `Unsupported value for 'voice': "alloy". Accepted values: george, bella.`, extra: { param: 'voice' } });
    expect(refusal(() => applyParamPolicies({ voice: 'toString' }, policies, 'x')).code).toBe('invalid_request');
    expect(refusal(() => applyParamPolicies({ voice: 'george', response_format: 5 }, policies, 'x')).message).toBe(`Unsupported value for 'response_format': a number. Accepted values: mp3.`);
  });

  it('a model\'s reject policy is unsupported_parameter naming the parameter (the spec 4.8 matrix)', () => {
    expect(refusal(() => applyParamPolicies({ style: 0.2 }, { style: { unsupported: 'reject' } }, 'model "eleven_v3"'))).toMatchObject({ code: 'unsupported_parameter', message: `The parameter 'style' is not supported by model "eleven_v3".` });
  });
});

describe('a stepped quantity meter', () => {
  const offering = { billing: { unit: 'second', per: 1n, price: 4_000_000n } } as unknown as CompiledOffering;

  it('prices each half-second step at half the unit price, rounding once', () => {
    expect(quantityCharge(1n, offering, 2n)).toBe(2_000_000n);
    expect(quantityCharge(61n, offering, 2n)).toBe(122_000_000n);
    expect(quantityHold(1n, offering, 2n)).toBe(2_000_000n);
    const odd = { billing: { unit: 'second', per: 1n, price: 3n } } as unknown as CompiledOffering;
    expect(quantityCharge(1n, odd, 2n)).toBe(2n);
    expect(quantityHold(1n, odd, 2n)).toBe(2n);
  });
});
