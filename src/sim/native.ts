/**
 * What every native (non-streaming JSON) route of the simulator shares: `sendJsonAnswer`, which applies
 * the chunk-level faults to a JSON body (`truncate_after_chunks`: the body is cut and the socket
 * destroyed; `error_after_chunks`: a complete response whose body stops early, i.e. malformed JSON;
 * `chunk_delay_ms`: a slow body), `seededUuid` for deterministic ids, request checks, and the
 * deterministic embedding vectors both embedding vendors answer with.
 */
import type http from 'node:http';
import type { Exchange } from './exchange.js';
import { bodyHash, slices, type Rec } from './text.js';

/** Pieces a JSON body is cut into when a chunk-level fault applies to it. */
export const JSON_PIECES = 4;

/** A UUID-shaped id (version-4 layout) derived from `seed`. */
export function seededUuid(seed: string): string {
  const h = bodyHash(seed);
  const variant = ((parseInt(h[16]!, 16) & 3) | 8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Sends a 200 JSON answer. With `truncate_after_chunks`, `error_after_chunks` or `chunk_delay_ms` in the
 * fault, the body goes out as `JSON_PIECES` writes through the stream machinery (content type kept,
 * chunked): cut after N pieces with the socket destroyed, or ended after N pieces (invalid JSON, status 200).
 */
export async function sendJsonAnswer(x: Exchange, body: unknown, headers: http.OutgoingHttpHeaders = {}): Promise<void> {
  const f = x.fault;
  if (f.truncate_after_chunks === undefined && f.error_after_chunks === undefined && !f.chunk_delay_ms) return x.sendJson(200, body, headers);
  await x.stream(slices(JSON.stringify(body), JSON_PIECES), { error: () => '' }, { ...headers, 'content-type': 'application/json' });
}

/** The first key of `body` that is not in `allowed`, if any. */
export function unknownKey(body: Rec, allowed: readonly string[]): string | undefined {
  return Object.keys(body).find((k) => !allowed.includes(k));
}

/** A positive integer (JSON number without fraction). */
export const isPositiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;


/** A deterministic unit vector for `text` (float32-exact values, so float and base64 agree). */
export function simEmbedding(model: string, text: string, dimension: number): number[] {
  const raw: number[] = [];
  for (let block = 0; raw.length < dimension; block++) {
    const h = Buffer.from(bodyHash(`${model}\u0000${text}\u0000${block}`), 'hex');
    for (let i = 0; i + 2 <= h.length && raw.length < dimension; i += 2) raw.push(h.readUInt16BE(i) / 32767.5 - 1);
  }
  const norm = Math.sqrt(raw.reduce((s, v) => s + v * v, 0)) || 1;
  return raw.map((v) => Math.fround(v / norm));
}

/** Little-endian float32 bytes of a vector, base64-encoded (Cohere's and OpenAI's `base64` type). */
export function float32Base64(vector: readonly number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}
