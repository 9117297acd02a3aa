/**
 * `audio-seconds` (spec 1 "audio minute", spec 4.8): the measured duration of the request's audio,
 * to the millisecond, so the meter's one rounding (ceil to whole seconds) bills 59.9 s as 60 s,
 * 60 s as 60 s and 60.1 s as 61 s, and decoder noise never adds a second.
 */
import { describe, expect, it } from 'vitest';
import { audioSecondsCounter, toMilliseconds } from '../../../src/meters/counters/audio-seconds.js';
import { CounterInputError } from '../../../src/meters/counters/counter.js';
import { roundQuantity } from '../../../src/meters/quantity-meter.js';
import { audioDurationSeconds } from '../../../src/pipeline/file-probes.js';
import { wavOfTenths } from '../../helpers/wav.js';

const facts = (...seconds: number[]): unknown => seconds.map((s) => ({ duration_seconds: s, size_bytes: 1 }));
const billed = (seconds: number): bigint => roundQuantity(audioSecondsCounter.count([facts(seconds)]), 'ceil');

describe('audio-seconds counter', () => {
  it('counts the measured seconds at the minute edges, billed as whole started seconds', () => {
    expect(audioSecondsCounter.name).toBe('audio-seconds');
    expect(audioSecondsCounter.count([facts(59.9)])).toBe(59.9);
    expect(billed(59.9)).toBe(60n);
    expect(billed(59.999)).toBe(60n);
    expect(billed(60)).toBe(60n);
    expect(billed(60.001)).toBe(61n);
    expect(billed(60.1)).toBe(61n);
    expect(billed(0.1)).toBe(1n);
    expect(billed(0.0004)).toBe(0n); // under half a millisecond: nothing measurable
  });

  it('rounds decoder noise to the millisecond before the meter rounds', () => {
    expect(toMilliseconds(60.000000001)).toBe(60);
    expect(billed(60.000000001)).toBe(60n);
    expect(billed(59.99999999)).toBe(60n);
    expect(billed(0.1 + 0.2)).toBe(1n);
  });

  it('sums several files and values, and takes an absent value as none', () => {
    expect(audioSecondsCounter.count([facts(1.5, 2.25), undefined, facts(0.25)])).toBe(4);
    expect(audioSecondsCounter.count([undefined])).toBe(0);
    expect(audioSecondsCounter.count([[]])).toBe(0);
  });

  it('refuses a value that is not a list of measured files', () => {
    const cases: Array<[unknown[], string]> = [
      [[59.9], 'counter audio-seconds: value 0 is a number; expected a list of measured files'],
      [[[{ size_bytes: 3 }]], 'counter audio-seconds: value 0 item 0 has no measured duration (absent); expected a non-negative number of seconds'],
      [[[{ duration_seconds: -1 }]], 'counter audio-seconds: value 0 item 0 has no measured duration (a number); expected a non-negative number of seconds'],
      [[[null]], 'counter audio-seconds: value 0 item 0 has no measured duration (absent); expected a non-negative number of seconds'],
    ];
    for (const [values, message] of cases) {
      expect(() => audioSecondsCounter.count(values)).toThrow(CounterInputError);
      expect(() => audioSecondsCounter.count(values)).toThrow(message);
    }
  });

  it('is fed exact durations by the probe: WAVs of 59.9 s, 60 s and 60.1 s', async () => {
    expect(await audioDurationSeconds(wavOfTenths(599), 'audio/wav')).toBe(59.9);
    expect(await audioDurationSeconds(wavOfTenths(600), 'audio/wav')).toBe(60);
    expect(await audioDurationSeconds(wavOfTenths(601), 'audio/wav')).toBe(60.1);
    expect(await audioDurationSeconds(Buffer.from('plain text'), 'audio/wav')).toBeNull();
    expect(await audioDurationSeconds(wavOfTenths(5), 'application/octet-stream')).toBe(0.5);
  });
});
