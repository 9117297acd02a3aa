/**
 * Where a metered quantity comes from (issue 9, "Meters are data"): exactly one declared source per
 * quantity, compiled once from the route manifest and read per request.
 *  - `translator: <name>`: a quantity the request's translator reports (e.g. per-document counts);
 *  - `upstream: /pointer`: a number in the upstream answer;
 *  - `header: <name>`: a number in an upstream response header;
 *  - `request: /pointer`: a number in the client request;
 *  - `constant: <n>`: the same for every call;
 *  - `counter: <name>` with `of: [/pointer, response:/pointer]`: a local counter (src/meters/counters)
 *    over values of the client request (or, prefixed `response:`, of the client answer; prefixed
 *    `files:`, the measured facts of the request's file parts, src/pipeline/file-probes.ts; see fileFacts).
 */
import { ManifestError } from '../config/errors.js';
import type { QuantitySource } from '../generated/manifest-types.js';
import { COUNTERS, counterNamed, type Counter } from './counters/index.js';
import { manifestPointer, readPointer, type Pointer } from './pointer.js';
import type { MeterContext } from './types.js';

/** A compiled source. */
export type Source =
  | { kind: 'translator'; name: string }
  | { kind: 'upstream'; pointer: Pointer }
  | { kind: 'header'; name: string }
  | { kind: 'request'; pointer: Pointer }
  | { kind: 'constant'; value: number }
  | { kind: 'counter'; counter: Counter; of: Array<{ in: 'request' | 'response' | 'files'; pointer: Pointer }> };

/**
 * A source, what it is multiplied by (a constant, or the number of values at a request pointer), and
 * another scaled source added to it (`plus`: e.g. the prompt's tokens plus a bound per input image).
 */
export type ScaledSource = Source & { times?: number | Pointer; plus?: ScaledSource };

/** What a source may read: the client request always; the answer's parts once there is one. */
export interface SourceInputs {
  request: unknown;
  /** The request's file parts' measured facts by part name (`files:/<part>`), known before forwarding. */
  files?: unknown;
  answer: { upstreamBody: unknown; headers: Readonly<Record<string, string>>; clientBody: unknown; quantities: Readonly<Record<string, number>> } | null;
}

const KINDS = ['translator', 'upstream', 'header', 'request', 'constant', 'counter'] as const;

/** Compiles one source with its `times`; a ManifestError names the file, the path and what is wrong. */
export function compileSource(raw: QuantitySource, file: string, at: string): ScaledSource {
  const source: ScaledSource = compileBare(raw, file, at);
  const plus = raw.plus === undefined ? {} : { plus: compileSource(raw.plus, file, `${at}/plus`) };
  if (raw.times === undefined) return { ...source, ...plus };
  if (typeof raw.times === 'number') return { ...source, times: raw.times, ...plus };
  return { ...source, times: manifestPointer(file, `${at}/times`, raw.times), ...plus };
}

function compileBare(raw: QuantitySource, file: string, at: string): Source {
  const kinds = KINDS.filter((k) => raw[k] !== undefined);
  if (kinds.length !== 1) throw new ManifestError(file, at, `declare exactly one of ${KINDS.join(', ')} (found ${kinds.length ? kinds.join(', ') : 'none'})`);
  if (raw.of !== undefined && kinds[0] !== 'counter') throw new ManifestError(file, `${at}/of`, '`of` belongs to a counter source');
  const pointer = (text: string, path: string): Pointer => manifestPointer(file, path, text);
  switch (kinds[0]!) {
    case 'translator': return { kind: 'translator', name: raw.translator! };
    case 'upstream': return { kind: 'upstream', pointer: pointer(raw.upstream!, `${at}/upstream`) };
    case 'header': return { kind: 'header', name: raw.header!.toLowerCase() };
    case 'request': return { kind: 'request', pointer: pointer(raw.request!, `${at}/request`) };
    case 'constant': return { kind: 'constant', value: raw.constant! };
    case 'counter': {
      const counter = counterNamed(raw.counter!);
      if (!counter) throw new ManifestError(file, `${at}/counter`, `unknown local counter "${raw.counter}" (known: ${[...COUNTERS.keys()].join(', ')})`);
      if (!raw.of?.length) throw new ManifestError(file, `${at}/of`, `counter "${raw.counter}" needs \`of\`: the pointers whose values it counts`);
      return {
        kind: 'counter', counter,
        of: raw.of.map((text, i) => {
          const where = text.startsWith('response:') ? 'response' as const : text.startsWith('files:') ? 'files' as const : 'request' as const;
          return { in: where, pointer: pointer(where === 'request' ? text : text.slice(where.length + 1), `${at}/of/${i}`) };
        }),
      };
    }
  }
}

/** How many values a request pointer holds: an array's length, 1 for any single value, 0 when absent. */
function multiplicity(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  return value === undefined ? 0 : 1;
}

/** Reads a source, applies its `times` and adds its `plus`. */
export function readScaled(source: ScaledSource, inputs: SourceInputs): number {
  const base = readSource(source, inputs);
  const scaled = source.times === undefined ? base : base * (typeof source.times === 'number' ? source.times : multiplicity(readPointer(inputs.request, source.times)));
  return source.plus ? scaled + readScaled(source.plus, inputs) : scaled;
}

/**
 * True when the source (and its `plus`) can be read from the request alone (at admission, before any
 * answer); with `headers`, an upstream response header counts too (known before the answer's body).
 */
export function readsRequestOnly(source: ScaledSource, opts: { headers?: boolean } = {}): boolean {
  if (source.plus && !readsRequestOnly(source.plus, opts)) return false;
  if (source.kind === 'constant' || source.kind === 'request' || (opts.headers === true && source.kind === 'header')) return true;
  return source.kind === 'counter' && source.of.every((o) => o.in !== 'response');
}

/**
 * The request field (or file part) a source reads first, for an error's `param`: a request pointer's
 * first step, or a counter's first input; null for a constant or a figure from the answer.
 */
export function inputField(source: ScaledSource): string | null {
  const own = source.kind === 'request' ? source.pointer[0]
    : source.kind === 'counter' ? source.of.find((o) => o.in !== 'response')?.pointer[0]
      : undefined;
  return own ?? (source.plus ? inputField(source.plus) : null);
}

/** Why a quantity could not be read (the answer lacked it): the caller decides the status. */
export class MissingQuantityError extends Error {}

function asNumber(value: unknown, what: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number < 0) throw new MissingQuantityError(`${what} is not a non-negative number`);
  return number;
}

/** Reads a source; MissingQuantityError when the answer does not carry the quantity. */
export function readSource(source: Source, inputs: SourceInputs): number {
  const answer = inputs.answer;
  switch (source.kind) {
    case 'constant': return source.value;
    case 'request': return asNumber(readPointer(inputs.request, source.pointer), `the request's /${source.pointer.join('/')}`);
    case 'counter': {
      const values = source.of.map((o) => readPointer(o.in === 'request' ? inputs.request : o.in === 'files' ? inputs.files : answer?.clientBody, o.pointer));
      return source.counter.count(values);
    }
    case 'translator': return asNumber(answer?.quantities[source.name], `the translator's ${source.name}`);
    case 'upstream': return asNumber(readPointer(answer?.upstreamBody, source.pointer), `the upstream answer's /${source.pointer.join('/')}`);
    case 'header': return asNumber(answer?.headers[source.name], `the upstream header ${source.name}`);
  }
}

/**
 * The measured facts of the request's parts by part name, and of its measured `url_inputs` by field
 * name, as the meters' `files:/<name>` values read them (a part no probe measured counts its size).
 */
export function fileFacts(request: Pick<MeterContext, 'files' | 'inputFacts'>): Record<string, Array<Readonly<Record<string, number>>>> {
  const view: Record<string, Array<Readonly<Record<string, number>>>> = Object.create(null) as Record<string, Array<Readonly<Record<string, number>>>>;
  for (const file of request.files) (view[file.field] ??= []).push(file.facts ?? { size_bytes: file.data.length });
  for (const [field, facts] of Object.entries(request.inputFacts ?? {})) (view[field] ??= []).push(facts);
  return view;
}
