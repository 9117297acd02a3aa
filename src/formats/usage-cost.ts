/**
 * `usage.cost` in a client answer (issue 31 item 12): the settled charge of the request in USD, as
 * OpenRouter's clients read it, written as a JSON number with the exact decimal digits of the usage
 * rows (`0.00012345`, never `1.2345e-4` nor a rounded float). A format says where its final usage sits
 * (src/formats/<id>/: `usageCost`); the splicing here is the same for every format.
 */
import { randomUUID } from 'node:crypto';
import { formatUsd } from '../money.js';

/** Where a format carries its final usage, for `usage.cost`. */
export interface UsageCostPlaces {
  /** The path of the usage object in a JSON answer (e.g. `['usage']`). */
  readonly answer: readonly string[];
  /** The path of the usage object in a stream frame that carries the final usage; null for any other frame. */
  frame(frame: string): readonly string[] | null;
}

/**
 * Stands for the cost while the answer is serialized, then replaced by the decimal: NUL-delimited and
 * random per process, so no answer text (a client could echo a fixed token) can be mistaken for it.
 */
const PLACEHOLDER = `\u0000usage-cost-${randomUUID()}\u0000`;
const QUOTED_PLACEHOLDER = JSON.stringify(PLACEHOLDER);

/** The object at `path` in `value`, or null when there is none. */
function objectAt(value: unknown, path: readonly string[]): Record<string, unknown> | null {
  let at: unknown = value;
  for (const key of path) {
    if (!at || typeof at !== 'object' || Array.isArray(at)) return null;
    at = (at as Record<string, unknown>)[key];
  }
  return at && typeof at === 'object' && !Array.isArray(at) ? (at as Record<string, unknown>) : null;
}

/**
 * `value` serialized with `cost` set on the usage object at `path` to `nano` as an exact decimal
 * number; null when `value` has no usage object there (nothing to say the cost in).
 */
export function jsonWithCost(value: unknown, path: readonly string[], nano: bigint): string | null {
  const usage = objectAt(value, path);
  if (!usage) return null;
  const previous = Object.prototype.hasOwnProperty.call(usage, 'cost') ? usage.cost : undefined;
  usage.cost = PLACEHOLDER;
  try {
    return JSON.stringify(value).replace(QUOTED_PLACEHOLDER, formatUsd(nano < 0n ? 0n : nano));
  } finally {
    if (previous === undefined) delete usage.cost;
    else usage.cost = previous;
  }
}

/**
 * An SSE frame (`event: ...\n` optional, one `data: <json>` line, blank line) with `cost` spliced into
 * the usage object at `path` of its data; the frame unchanged when its data is not such JSON.
 */
export function frameWithCost(frame: string, path: readonly string[], nano: bigint): string {
  const lines = frame.split('\n');
  const at = lines.findIndex((l) => l.startsWith('data: '));
  if (at < 0) return frame;
  let data: unknown;
  try { data = JSON.parse(lines[at]!.slice(6)); } catch { return frame; }
  const spliced = jsonWithCost(data, path, nano);
  if (spliced === null) return frame;
  lines[at] = `data: ${spliced}`;
  return lines.join('\n');
}

/** Frames named by their `event:` line (`event: <name>` first), for formats with named stream events. */
export function namedEventFrame(names: ReadonlySet<string>, path: readonly string[]): (frame: string) => readonly string[] | null {
  return (frame) => {
    if (!frame.startsWith('event: ')) return null;
    const end = frame.indexOf('\n');
    return names.has(frame.slice(7, end < 0 ? undefined : end).trim()) ? path : null;
  };
}
