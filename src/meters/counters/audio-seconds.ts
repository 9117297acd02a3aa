/**
 * `audio-seconds`: spec 1 "Speech recognition: audio minute or reported tokens, depending on the
 * model"; spec 4.8. The seconds of audio in the request's file parts, as measured locally before
 * forwarding (src/pipeline/file-probes.ts, music-metadata). Each `of` value is a list of measured
 * facts (`files:/<part>`), each with `duration_seconds`. Durations are summed, then rounded to the
 * millisecond, so floating-point noise in a decoder's figure (60.000000001) never reaches the meter's
 * rounding: 59.9 s counts 59.9, 60 s counts 60, 60.1 s counts 60.1. The meter's `round` (ceil) then
 * makes whole billed seconds, once per usage row.
 */
import { CounterInputError, describeType, type Counter } from './counter.js';

/** A measured duration in seconds, rounded to the millisecond. */
export function toMilliseconds(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

function durationOf(item: unknown, index: number, at: number): number {
  const seconds = item !== null && typeof item === 'object' ? (item as Record<string, unknown>).duration_seconds : undefined;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    throw new CounterInputError('audio-seconds', index, `item ${at} has no measured duration (${describeType(seconds)}); expected a non-negative number of seconds`);
  }
  return seconds;
}

/** Counts the seconds of audio in every measured file of every value. */
export const audioSecondsCounter: Counter = {
  name: 'audio-seconds',
  unit: 'second',
  count(values) {
    let total = 0;
    values.forEach((value, i) => {
      if (value === undefined) return;
      if (!Array.isArray(value)) throw new CounterInputError('audio-seconds', i, `is ${describeType(value)}; expected a list of measured files`);
      value.forEach((item: unknown, at) => { total += durationOf(item, i, at); });
    });
    return toMilliseconds(total);
  },
};
