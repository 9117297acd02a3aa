/**
 * Golden fixtures for every translator (test/translate/<from>--<to>/<case>/): the client request,
 * the expected upstream request (and query, `upstream-query.json`, when the operation takes one), an
 * upstream JSON answer (with its headers, `upstream-headers.json`, when they carry a quantity) or SSE stream, the expected client answer
 * or stream (or an upstream file, `upstream-response.mp3`, or an SSE answer read whole, `upstream-response.sse`, and the client file it becomes, `client-file.json`), and the expected normalized usage (and named quantities, `quantities.json`, for translator-sourced meters; a job's stored outputs, `upstream-outputs.json`, for translators answering with them). Streams are also cut at every event boundary: the
 * translator must not throw and must emit exactly a prefix of the full client stream. A multipart
 * request (spec 4.8 audio) lists its file parts in `client-files.json`; `upstream-request.json` then
 * describes the FormData (`{multipart: [[name, value]]}`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { loadGateway } from '../../src/config/load.js';
import type { CompiledGateway } from '../../src/config/types.js';
import { projectRoot } from '../../src/paths.js';
import { createTranslator, translatorPairs } from '../../src/translate/registry.js';
import { SseParser, type SseEvent } from '../../src/translate/sse.js';
import type { GeneratedOutput, Translator, TranslatorOptions } from '../../src/translate/types.js';
import type { UploadedFile } from '../../src/bodies/multipart.js';
import { FormData } from 'undici';
import { RawBody } from '../../src/upstream/raw-body.js';

const here = join(projectRoot(), 'test/translate');
const pairs = readdirSync(here, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name.includes('--')).map((d) => d.name);

function events(text: string): SseEvent[] {
  return new SseParser().push(text);
}

/**
 * A multipart upstream request (FormData) as JSON for its fixture: `{multipart: [[name, value]]}`,
 * a file part's value `{filename, type, size}`; any other body as is.
 */
function describeBody(body: unknown): unknown {
  // A raw upstream body (RawBody): its type and bytes.
  if (body instanceof RawBody) return { raw: { content_type: body.contentType, base64: body.data.toString('base64') } };
  if (!(body instanceof FormData)) return body;
  return { multipart: [...body.entries()].map(([name, value]) => [name, typeof value === 'string' ? value : { filename: value.name, type: value.type, size: value.size }]) };
}

/** The request's file parts (`client-files.json`: field, filename, content type and a fixture under test/fixtures/files). */
function clientFiles(file: string): UploadedFile[] | undefined {
  if (!existsSync(file)) return undefined;
  const list = JSON.parse(readFileSync(file, 'utf8')) as Array<{ field: string; filename: string; contentType: string; fixture: string }>;
  return list.map((f) => ({ field: f.field, filename: f.filename, contentType: f.contentType, data: readFileSync(join(projectRoot(), 'test/fixtures/files', f.fixture)) }));
}

/** A finished job's stored outputs (`upstream-outputs.json`: descriptors, `data` as base64), for translators that answer with them. */
function outputsOf(file: string): GeneratedOutput[] | undefined {
  if (!existsSync(file)) return undefined;
  const list = JSON.parse(readFileSync(file, 'utf8')) as Array<Omit<GeneratedOutput, 'expiresAt' | 'data'> & { expiresAt: string; data: string }>;
  return list.map((o) => ({ ...o, expiresAt: new Date(o.expiresAt), data: Buffer.from(o.data, 'base64') }));
}

function json(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

function runStream(translator: Translator, model: string, upstream: SseEvent[]): { frames: unknown[]; usage: unknown; done: boolean } {
  const stream = translator.stream(model);
  const frames: unknown[] = [];
  let done = false;
  for (const event of upstream) {
    const step = stream.push(event);
    for (const frame of step.frames) for (const e of events(frame)) frames.push(e.event ? { event: e.event, data: JSON.parse(e.data) } : JSON.parse(e.data));
    if (step.error) throw step.error;
    done ||= step.done === true;
  }
  return { frames, usage: stream.usage(), done };
}

let gateway: CompiledGateway;
// Translators that must invent a timestamp (e.g. `created`) read Date.now(): frozen for fixtures.
beforeAll(() => { vi.useFakeTimers({ now: 1_700_000_000_000, toFake: ['Date'] }); });
afterAll(() => { vi.useRealTimers(); });
beforeAll(async () => {
  gateway = await compileGateway(await loadGateway(join(projectRoot(), 'gateway.config.yaml')), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
});

it('has golden fixtures for every registered translator', () => {
  expect(translatorPairs().filter((pair) => !pairs.includes(pair))).toEqual([]);
});

for (const pair of pairs) {
  const [from, to] = pair.split('--') as [string, string];
  const cases = readdirSync(join(here, pair), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  describe(pair, () => {
    for (const name of cases) {
      const dir = join(here, pair, name);
      const file = (f: string): string => join(dir, f);
      it(name, () => {
        const client = json(file('client-request.json'));
        const model = client.model as string;
        const offering = gateway.offerings.get(model)!;
        expect(offering, `fixture model ${model} is in the catalogue`).toBeDefined();
        // The offering the request is prepared for, as the pipeline passes it (its capabilities; a chained translator needs it).
        const options: TranslatorOptions = { ...(existsSync(file('options.json')) ? (json(file('options.json')) as unknown as TranslatorOptions) : { params: {} }), offering };
        const translator = createTranslator(from, to, client, model, options);
        // Multipart operations (spec 4.8 audio) take the request's file parts and send a FormData.
        expect(describeBody(translator.request(structuredClone(client), offering, clientFiles(file('client-files.json'))))).toEqual(json(file('upstream-request.json')));
        // Query parameters and response headers, for operations that use them (e.g. translation).
        if (existsSync(file('upstream-query.json'))) expect(translator.query?.(structuredClone(client))).toEqual(json(file('upstream-query.json')));
        const headers = existsSync(file('upstream-headers.json')) ? (json(file('upstream-headers.json')) as Record<string, string>) : {};
        const usage = json(file('usage.json'));
        // A binary answer (`answer: binary` operations): the upstream's bytes and the client file they become.
        // An SSE answer read whole into a file (`upstream-response.sse`: OpenAI speech with stream_format sse):
        // its client file's bytes are in `client-file.b64` (base64), its usage usage.json.
        const binary = ['mp3', 'opus', 'docx', 'pdf', 'sse'].map((ext) => file(`upstream-response.${ext}`)).find((path) => existsSync(path));
        if (binary) {
          const data = readFileSync(binary);
          const out = translator.file!(data, headers, model);
          expect({ contentType: out.contentType, filename: out.filename, quantities: out.quantities ?? null, sameBytes: out.data.equals(data) }).toEqual(json(file('client-file.json')));
          expect(out.usage ?? null).toEqual(usage);
          if (existsSync(file('client-file.b64'))) expect(out.data.toString('base64')).toBe(readFileSync(file('client-file.b64'), 'utf8').trim());
          // The same file planned from the headers alone, as it streams through (issue 9 point 3): its checks pass on the first and last bytes.
          // (An SSE answer is read whole: it never streams through, and its plan refuses it.)
          const plan = binary.endsWith('.sse') ? undefined : translator.filePlan?.(headers, model);
          if (plan) {
            expect({ contentType: plan.contentType, filename: plan.filename, quantities: plan.quantities ?? null, sameBytes: true }).toEqual(json(file('client-file.json')));
            plan.checkHead(data.subarray(0, plan.headBytes));
            if (plan.tailBytes > 0) plan.checkTail?.(data.subarray(data.length - plan.tailBytes));
          }
          return;
        }
        if (existsSync(file('upstream-response.json'))) {
          const result = translator.response(json(file('upstream-response.json')), model, headers, outputsOf(file('upstream-outputs.json')));
          expect(result.body).toEqual(json(file('client-response.json')));
          expect(result.usage).toEqual(usage);
          // A plain-text client answer rendered from the JSON (spec 4.8 transcription text): `client-response.txt`.
          if (existsSync(file('client-response.txt'))) expect(result.text?.data).toBe(readFileSync(file('client-response.txt'), 'utf8'));
          // Named quantities for `source: { translator: <name> }` meters (e.g. text records), when the case pins them.
          if (existsSync(file('quantities.json'))) expect(result.quantities).toEqual(json(file('quantities.json')));
          return;
        }
        const upstream = events(readFileSync(file('upstream-stream.sse'), 'utf8'));
        const expected = events(readFileSync(file('client-stream.sse'), 'utf8')).map((e) => (e.event ? { event: e.event, data: JSON.parse(e.data) } : JSON.parse(e.data)));
        const full = runStream(translator, model, upstream);
        expect(full.frames).toEqual(expected);
        expect(full.usage).toEqual(usage);
        expect(full.done).toBe(true);
        for (let cut = 0; cut < upstream.length; cut++) {
          const partial = runStream(createTranslator(from, to, client, model, options), model, upstream.slice(0, cut));
          expect(partial.frames, `cut after ${cut} events`).toEqual(expected.slice(0, partial.frames.length));
          expect(partial.done).toBe(false);
        }
      });
    }
  });
}
