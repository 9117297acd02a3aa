/**
 * The stream framings (src/pipeline/forward/framing.ts): a whole ConverseStream answer in AWS
 * event-stream frames gives the same events however the bytes are cut (every byte boundary, and one
 * byte at a time), each frame as the stream translators read it; a frame failing its CRC returns the
 * events before it and a clean upstream_error, and nothing after; SSE is read as the one SSE parser does.
 */
import { describe, expect, it } from 'vitest';
import { framingFor } from '../../../src/pipeline/forward/framing.js';
import { encodeFrame } from '../../../src/translate/eventstream.js';
import type { SseEvent } from '../../../src/translate/sse.js';

const event = (type: string, payload: unknown): Buffer => encodeFrame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload)));
const FRAMES = [
  event('messageStart', { role: 'assistant' }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Héllo' } }),
  event('contentBlockStop', { contentBlockIndex: 0 }),
  event('messageStop', { stopReason: 'end_turn' }),
  event('metadata', { usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: 1 } }),
];
const WHOLE = Buffer.concat(FRAMES);
const EXPECTED: SseEvent[] = [
  { event: 'messageStart', data: '{"role":"assistant"}' },
  { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"Héllo"}}' },
  { event: 'contentBlockStop', data: '{"contentBlockIndex":0}' },
  { event: 'messageStop', data: '{"stopReason":"end_turn"}' },
  { event: 'metadata', data: '{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5},"metrics":{"latencyMs":1}}' },
];

function read(pieces: Buffer[], kind: 'event-stream' | 'sse' = 'event-stream'): { events: SseEvent[]; errors: string[] } {
  const framing = framingFor(kind);
  const out = { events: [] as SseEvent[], errors: [] as string[] };
  for (const piece of pieces) {
    const step = framing.push(piece);
    out.events.push(...step.events);
    if (step.error) out.errors.push(`${step.error.code}: ${step.error.message}`);
  }
  return out;
}

describe('the event-stream framing', () => {
  it('reads the same events cut at every byte boundary, and one byte at a time', () => {
    for (let cut = 0; cut <= WHOLE.length; cut++) {
      expect(read([WHOLE.subarray(0, cut), WHOLE.subarray(cut)]), `cut at ${cut}`).toEqual({ events: EXPECTED, errors: [] });
    }
    expect(read([...WHOLE].map((byte) => Buffer.from([byte])))).toEqual({ events: EXPECTED, errors: [] });
  });

  it('an exception frame is an event named exception:<type>', () => {
    const frame = encodeFrame({ ':exception-type': 'throttlingException', ':content-type': 'application/json', ':message-type': 'exception' }, Buffer.from('{"message":"slow down"}'));
    expect(read([frame]).events).toEqual([{ event: 'exception:throttlingException', data: '{"message":"slow down"}' }]);
  });

  it('a frame failing its message CRC: the events before it, a clean upstream_error, nothing after', () => {
    const bad = Buffer.from(FRAMES[2]!);
    bad[bad.length - 1] = bad[bad.length - 1]! ^ 0xff;
    const stream = Buffer.concat([FRAMES[0]!, FRAMES[1]!, bad, FRAMES[3]!, FRAMES[4]!]);
    for (let cut = 0; cut <= stream.length; cut += 7) {
      const out = read([stream.subarray(0, cut), stream.subarray(cut), FRAMES[0]!]);
      expect(out.events, `cut at ${cut}`).toEqual(EXPECTED.slice(0, 2));
      expect(out.errors).toEqual(['upstream_error: The upstream stream was corrupt (event-stream message checksum mismatch).']);
    }
  });

  it('a corrupt prelude is the same clean error', () => {
    const bad = Buffer.from(FRAMES[0]!);
    bad[9] = bad[9]! ^ 0x01;
    expect(read([bad])).toEqual({ events: [], errors: ['upstream_error: The upstream stream was corrupt (event-stream prelude checksum mismatch).'] });
  });
});

describe('the SSE framing', () => {
  it('reads server-sent events, a multi-byte character split between pieces', () => {
    const text = Buffer.from('event: a\ndata: {"x":"é"}\n\ndata: [DONE]\n\n');
    const at = text.indexOf(0xc3) + 1;
    expect(read([text.subarray(0, at), text.subarray(at)], 'sse')).toEqual({ events: [{ event: 'a', data: '{"x":"é"}' }, { data: '[DONE]' }], errors: [] });
  });
});
