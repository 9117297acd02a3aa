/** Load generation over undici pools: request scenarios, open and closed loops, open streams. */

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { CFG, CHAT_MODEL, MAX_TOKENS, OPEN_STREAM_MODEL, TRANSLATED_MODEL } from './config.mjs';
import { mallocHeapMbOf, memoryOf } from './cpu.mjs';

/** 64 distinct prompts, so that nothing keyed by the body sees one request over and over. */
const PROMPTS = Array.from({ length: 64 }, (_, i) => `Hello, this is benchmark prompt number ${i}. Please answer briefly.`);
const chatBodies = (model, stream) => PROMPTS.map((content) => JSON.stringify({
  model, max_tokens: MAX_TOKENS, ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content }],
}));
const BODIES = {
  chat: chatBodies(CHAT_MODEL, false),
  stream: chatBodies(CHAT_MODEL, true),
  translated: chatBodies(TRANSLATED_MODEL, true),
  open: chatBodies(OPEN_STREAM_MODEL, true),
  embeddings: PROMPTS.map((input) => JSON.stringify({ model: 'text-embedding-3-small', input, encoding_format: 'float' })),
  // The direct baseline of the translated stream: the same request in the upstream's own format.
  messages: PROMPTS.map((content) => JSON.stringify({
    model: 'claude-haiku-4-5-20251001', max_tokens: MAX_TOKENS, stream: true, messages: [{ role: 'user', content }],
  })),
};

/**
 * One request: resolves to {ok, latency, ttfb} in ms (ttfb = first body byte; latency = last byte).
 * A stream counts as ok only when it ends with its format's terminator.
 */
export async function send(pool, { path, headers, bodies, stream, terminator }, i, onFirstByte) {
  const start = performance.now();
  try {
    const { statusCode, body } = await pool.request({
      method: 'POST', path, headers: typeof headers === 'function' ? headers(i) : headers, body: bodies[i % bodies.length],
    });
    let ttfb = NaN;
    let tail = '';
    for await (const chunk of body) {
      if (Number.isNaN(ttfb)) { ttfb = performance.now() - start; onFirstByte?.(); }
      if (stream) tail = (tail + chunk.toString('latin1')).slice(-200);
    }
    const latency = performance.now() - start;
    const ok = statusCode === 200 && (!stream || tail.includes(terminator));
    return { ok, latency, ttfb, error: ok ? null : `status ${statusCode}${stream ? `, stream tail ${JSON.stringify(tail.slice(-80))}` : ''}` };
  } catch (error) {
    return { ok: false, latency: performance.now() - start, ttfb: NaN, error: String(error?.message ?? error) };
  }
}

const pct = (arr, p) => (arr.length === 0 ? NaN : arr[Math.min(arr.length - 1, Math.max(0, Math.ceil(p * arr.length) - 1))]);

/** Percentiles and rates of a list of request results over `seconds`. */
export function summarize(results, seconds) {
  const ok = results.filter((r) => r.ok);
  const sorted = (key) => ok.map((r) => r[key]).filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const lat = sorted('latency');
  const ttfb = sorted('ttfb');
  return {
    sent: results.length, ok: ok.length, errors: results.length - ok.length,
    firstError: results.find((r) => !r.ok)?.error ?? null,
    rps: ok.length / seconds,
    p50: pct(lat, 0.5), p99: pct(lat, 0.99), max: lat.at(-1) ?? NaN, mean: lat.length ? lat.reduce((a, b) => a + b, 0) / lat.length : NaN,
    ttfbP50: pct(ttfb, 0.5), ttfbP99: pct(ttfb, 0.99), ttfbMean: ttfb.length ? ttfb.reduce((a, b) => a + b, 0) / ttfb.length : NaN,
  };
}

/**
 * Open loop: request i is sent at start + i/rate whatever the answers do; resolves when all are
 * answered. A target that falls more than a second behind (more than max(256, rate) requests in
 * flight) is overloaded: sending stops there, and the latencies measured are mostly queueing.
 */
export async function openLoop(pool, scenario, rate, seconds) {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const maxInFlight = Math.max(256, rate);
  const pending = [];
  const start = performance.now() + 5;
  let i = 0;
  let inFlight = 0;
  let overloadedAfter = null;
  await new Promise((done) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        if (inFlight >= maxInFlight) { overloadedAfter = (now - start) / 1000; return done(); }
        inFlight += 1;
        pending.push(send(pool, scenario, i).finally(() => { inFlight -= 1; }));
        i += 1;
      }
      if (i >= total) return done();
      setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
    };
    tick();
  });
  const results = await Promise.all(pending);
  return { results, took: (performance.now() - start) / 1000, overloadedAfter };
}

/** Closed loop: `concurrency` workers, each sending its next request when the last one is answered. */
export async function closedLoop(pool, scenario, concurrency, seconds) {
  const results = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  let n = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) results.push(await send(pool, scenario, n++));
  }));
  return { results, took: (performance.now() - start) / 1000, overloadedAfter: null };
}

/** One target's slices of a phase, merged: percentiles over every request, rates over the summed time. */
export function aggregate(slices, rate) {
  const results = slices.flatMap((x) => x.results);
  const took = slices.reduce((a, x) => a + x.took, 0);
  const summary = summarize(results, took);
  const cpuSeconds = slices.reduce((a, x) => a + (x.targetCpu ?? 0), 0);
  const weighted = (key) => slices.reduce((a, x) => a + x.cpu[key] * x.took, 0) / took;
  const overloadedAfter = slices.find((x) => x.overloadedAfter !== null)?.overloadedAfter ?? null;
  return {
    ...summary, rate, overloadedAfter,
    // Each slice's own rate: the spread between a target's rounds is the run's noise.
    sliceRps: slices.map((x) => x.results.filter((r) => r.ok).length / x.took),
    overloaded: rate !== undefined && (overloadedAfter !== null || summary.rps < 0.95 * rate),
    cpuUsPerRequest: summary.ok > 0 && slices.every((x) => x.targetCpu !== null) ? (cpuSeconds * 1e6) / summary.ok : NaN,
    cpu: { busy: weighted('busy'), own: weighted('own'), postgres: weighted('postgres'), background: weighted('background'), backgroundMax: Math.max(...slices.map((x) => x.cpu.background)) },
  };
}

/** An undici pool of `connections` keep-alive HTTP/1.1 connections to `url`. */
export const newPool = (url, connections) => new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 120_000 });

/** The request scenarios (path, headers, bodies, stream terminator) of a target. */
export function scenarios(target) {
  const json = { 'content-type': 'application/json' };
  // The floor proxy passes every request through as it is: the same requests as the simulator's.
  if (target.kind === 'direct' || target.kind === 'floor') {
    return {
      chat: { path: '/v1/chat/completions', headers: { ...json, authorization: 'Bearer sk-bench' }, bodies: BODIES.chat },
      stream: { path: '/v1/chat/completions', headers: { ...json, authorization: 'Bearer sk-bench' }, bodies: BODIES.stream, stream: true, terminator: '[DONE]' },
      translated: {
        path: '/v1/messages', headers: { ...json, 'x-api-key': 'sk-bench', 'anthropic-version': '2023-06-01' },
        bodies: BODIES.messages, stream: true, terminator: 'message_stop',
      },
      open: { path: '/v1/chat/completions', headers: { ...json, authorization: 'Bearer sk-bench' }, bodies: BODIES.open, stream: true, terminator: '[DONE]' },
      embeddings: { path: '/v1/embeddings', headers: { ...json, authorization: 'Bearer sk-bench' }, bodies: BODIES.embeddings },
    };
  }
  if (target.kind === 'gateway') {
    const headers = { ...json, authorization: `Bearer ${target.key}` };
    const keys = target.extraKeys ?? [target.key];
    return {
      chat: { path: '/v1/chat/completions', headers, bodies: BODIES.chat },
      chatMulti: { path: '/v1/chat/completions', headers: (i) => ({ ...json, authorization: `Bearer ${keys[i % keys.length]}` }), bodies: BODIES.chat },
      stream: { path: '/v1/chat/completions', headers, bodies: BODIES.stream, stream: true, terminator: '[DONE]' },
      translated: { path: '/v1/chat/completions', headers, bodies: BODIES.translated, stream: true, terminator: '[DONE]' },
      open: { path: '/v1/chat/completions', headers, bodies: BODIES.open, stream: true, terminator: '[DONE]' },
      embeddings: { path: '/v1/embeddings', headers, bodies: BODIES.embeddings },
    };
  }
  const portkey = (provider) => ({
    ...json, authorization: 'Bearer sk-bench', 'x-portkey-provider': provider, 'x-portkey-custom-host': `${target.simUrl}/v1`,
  });
  return {
    chat: { path: '/v1/chat/completions', headers: portkey('openai'), bodies: BODIES.chat },
    stream: { path: '/v1/chat/completions', headers: portkey('openai'), bodies: BODIES.stream, stream: true, terminator: '[DONE]' },
    translated: { path: '/v1/chat/completions', headers: portkey('anthropic'), bodies: BODIES.translated, stream: true, terminator: '[DONE]' },
    open: { path: '/v1/chat/completions', headers: portkey('openai'), bodies: BODIES.open, stream: true, terminator: '[DONE]' },
    embeddings: { path: '/v1/embeddings', headers: portkey('openai'), bodies: BODIES.embeddings },
  };
}

/** Calls the simulator's control API (/__sim/...) and returns its JSON answer. */
export async function simControl(simUrl, method, path, body) {
  const res = await fetch(`${simUrl}${path}`, {
    method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`simulator ${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Opens `count` streams at once (ramped over about a second) and samples the target's RSS while they are all open. */
export async function openStreams(target, simUrl, count) {
  const scenario = scenarios(target).open;
  const pool = newPool(target.url, count + 16);
  await simControl(simUrl, 'POST', '/__sim/faults', { model: OPEN_STREAM_MODEL, fault: { chunk_delay_ms: CFG.openStreamChunkDelayMs } });
  const before = target.pid ? memoryOf(target.pid) : null;
  const mallocBefore = target.pid ? mallocHeapMbOf(target.pid) : NaN;
  let mallocAllOpen = NaN;
  let opened = 0;
  let allOpenAt = null;
  let peak = 0;
  let rssAllOpen = NaN;
  const sampler = setInterval(() => {
    if (!target.pid) return;
    const { rssMb } = memoryOf(target.pid);
    if (rssMb > peak) peak = rssMb;
  }, 50);
  const start = performance.now();
  const pending = [];
  for (let i = 0; i < count; i++) {
    pending.push(send(pool, scenario, i, () => {
      opened += 1;
      if (opened === count) allOpenAt = performance.now();
    }));
    if (i % 10 === 9) await sleep(10);
  }
  // Hold: every stream lasts (events - 1) x chunk delay (about 8 s); sample once all are open.
  while (allOpenAt === null && performance.now() - start < 20_000) await sleep(20);
  if (allOpenAt !== null && target.pid) {
    await sleep(500);
    rssAllOpen = memoryOf(target.pid).rssMb;
    mallocAllOpen = mallocHeapMbOf(target.pid);
  }
  const results = await Promise.all(pending);
  clearInterval(sampler);
  await pool.close();
  await simControl(simUrl, 'DELETE', '/__sim/faults');
  const summary = summarize(results, (performance.now() - start) / 1000);
  const after = target.pid ? memoryOf(target.pid) : null;
  return {
    count, opened, ok: summary.ok, errors: summary.errors, firstError: summary.firstError,
    secondsToOpenAll: allOpenAt === null ? NaN : (allOpenAt - start) / 1000,
    rssStartMb: target.rssStartMb ?? NaN, rssBeforeMb: before?.rssMb ?? NaN, rssAllOpenMb: rssAllOpen, rssPeakMb: peak || NaN,
    mallocStartMb: target.mallocStartMb ?? NaN, mallocBeforeMb: mallocBefore, mallocAllOpenMb: mallocAllOpen, hwmMb: after?.hwmMb ?? NaN, rssAfterMb: after?.rssMb ?? NaN,
    ttfbP50: summary.ttfbP50, ttfbP99: summary.ttfbP99,
  };
}
