/**
 * Golden fixtures for every translator (test/translate/<from>--<to>/<case>/): the client request,
 * the expected upstream request (and query, `upstream-query.json`, when the operation takes one), an
 * upstream JSON answer (with its headers, `upstream-headers.json`, when they carry a quantity) or SSE stream, the expected client answer
 * or stream, and the expected normalized usage (and named quantities, `quantities.json`, for translator-sourced meters). Streams are also cut at every event boundary: the
 * translator must not throw and must emit exactly a prefix of the full client stream.
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
import type { Translator, TranslatorOptions } from '../../src/translate/types.js';

const here = join(projectRoot(), 'test/translate');
const pairs = readdirSync(here, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name.includes('--')).map((d) => d.name);

function events(text: string): SseEvent[] {
  return new SseParser().push(text);
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
        const options = existsSync(file('options.json')) ? (json(file('options.json')) as unknown as TranslatorOptions) : { params: {} };
        const translator = createTranslator(from, to, client, model, options);
        expect(translator.request(structuredClone(client), offering)).toEqual(json(file('upstream-request.json')));
        // Query parameters and response headers, for operations that use them (e.g. translation).
        if (existsSync(file('upstream-query.json'))) expect(translator.query?.(structuredClone(client))).toEqual(json(file('upstream-query.json')));
        const headers = existsSync(file('upstream-headers.json')) ? (json(file('upstream-headers.json')) as Record<string, string>) : {};
        const usage = json(file('usage.json'));
        if (existsSync(file('upstream-response.json'))) {
          const result = translator.response(json(file('upstream-response.json')), model, headers);
          expect(result.body).toEqual(json(file('client-response.json')));
          expect(result.usage).toEqual(usage);
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
