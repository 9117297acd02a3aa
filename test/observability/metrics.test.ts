/** The Prometheus registry and GatewayMetrics: the rendered text is parsed back and checked sample by sample. */
import { openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BATCH_MS, BatchedFdDestination } from '../../src/observability/log-destination.js';
import {
  BigIntCounter, Counter, DURATION_BUCKETS_SECONDS, Gauge, GatewayMetrics, Histogram, Registry, escapeLabelValue,
} from '../../src/observability/metrics.js';

interface Sample { name: string; labels: Record<string, string>; value: string; }
interface Parsed { samples: Sample[]; help: Map<string, string>; type: Map<string, string>; }

/** A strict parser of the text format 0.0.4 (the subset we emit): comments, samples, escaped label values. */
function parse(text: string): Parsed {
  expect(text.endsWith('\n')).toBe(true);
  const samples: Sample[] = [];
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  for (const line of text.slice(0, -1).split('\n')) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      const map = comment[1] === 'HELP' ? help : type;
      expect(map.has(comment[2]!), `duplicate ${comment[1]} for ${comment[2]}`).toBe(false);
      map.set(comment[2]!, comment[3]!);
      continue;
    }
    const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    expect(head, `bad line: ${JSON.stringify(line)}`).not.toBeNull();
    const name = head![1]!;
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      while (line[i] !== '}') {
        const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(i));
        expect(label, `bad labels: ${line}`).not.toBeNull();
        i += label![0].length;
        let value = '';
        for (;;) {
          const c = line[i++];
          if (c === undefined) throw new Error(`unterminated label value: ${line}`);
          if (c === '"') break;
          if (c === '\\') {
            const e = line[i++];
            if (e === 'n') value += '\n';
            else if (e === '\\' || e === '"') value += e;
            else throw new Error(`bad escape \\${e} in ${line}`);
          } else value += c;
        }
        expect(labels[label![1]!], `duplicate label in ${line}`).toBeUndefined();
        labels[label![1]!] = value;
        if (line[i] === ',') i++;
      }
      i++;
    }
    expect(line[i]).toBe(' ');
    const value = line.slice(i + 1);
    expect(value).toMatch(/^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]Inf|NaN)$/);
    samples.push({ name, labels, value });
  }
  return { samples, help, type };
}

function find(p: Parsed, name: string, labels: Record<string, string> = {}): Sample[] {
  return p.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

function one(p: Parsed, name: string, labels: Record<string, string> = {}): string {
  const found = find(p, name, labels);
  expect(found, `${name} ${JSON.stringify(labels)}`).toHaveLength(1);
  return found[0]!.value;
}

/** Every sample belongs to a metric with HELP and TYPE, declared before it. */
function checkFamilies(text: string): void {
  const declared = new Set<string>();
  for (const line of text.trimEnd().split('\n')) {
    const t = /^# TYPE (\S+) (counter|gauge|histogram)$/.exec(line);
    if (t) { declared.add(t[1]!); continue; }
    if (line.startsWith('#')) continue;
    const name = /^[^{ ]+/.exec(line)![0];
    const family = declared.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    expect(declared.has(family), `sample before TYPE: ${line}`).toBe(true);
  }
}

describe('Registry rendering', () => {
  it('renders counters with HELP, TYPE and labels; an unlabelled counter starts at 0', async () => {
    const r = new Registry();
    const plain = r.register(new Counter('t_plain_total', 'Plain.\nSecond line with \\ backslash.'));
    const c = r.register(new Counter('t_requests_total', 'Requests.', ['route', 'status']));
    c.inc(['chat', '200']);
    c.inc(['chat', '200'], 2);
    c.inc(['chat', '429']);
    const text = await r.render();
    const p = parse(text);
    checkFamilies(text);
    expect(p.type.get('t_requests_total')).toBe('counter');
    expect(p.help.get('t_plain_total')).toBe('Plain.\\nSecond line with \\\\ backslash.');
    expect(one(p, 't_plain_total')).toBe('0');
    expect(one(p, 't_requests_total', { route: 'chat', status: '200' })).toBe('3');
    expect(one(p, 't_requests_total', { route: 'chat', status: '429' })).toBe('1');
    plain.inc();
    expect(one(parse(await r.render()), 't_plain_total')).toBe('1');
  });

  it('escapes label values (backslash, quote, newline) and parses back to the original', async () => {
    const r = new Registry();
    const c = r.register(new Counter('t_escape_total', 'Escaping.', ['v']));
    const nasty = ['a\\b', 'say "hi"', 'line1\nline2', '\\"\n', '', 'plain', 'ünïcødé {x="y"}, z'];
    for (const v of nasty) c.inc([v]);
    const text = await r.render();
    expect(text).toContain('t_escape_total{v="a\\\\b"} 1');
    expect(text).toContain('t_escape_total{v="say \\"hi\\""} 1');
    expect(text).toContain('t_escape_total{v="line1\\nline2"} 1');
    // No raw newline inside a sample line: every line is a comment or one sample.
    const p = parse(text);
    expect(find(p, 't_escape_total').map((s) => s.labels.v).sort()).toEqual([...nasty].sort());
    expect(escapeLabelValue('nothing to do')).toBe('nothing to do');
  });

  it('renders histograms: cumulative buckets, +Inf == _count, _sum; le is inclusive', async () => {
    const r = new Registry();
    const h = r.register(new Histogram('t_duration_seconds', 'Durations.', ['route'], [0.1, 1, 0.5]));
    const values = [0.05, 0.1, 0.2, 0.5, 0.7, 1, 3, 100];
    for (const v of values) h.observe(['a'], v);
    h.observe(['b'], 0.3);
    h.observe(['a'], Number.NaN);
    const text = await r.render();
    checkFamilies(text);
    const p = parse(text);
    expect(p.type.get('t_duration_seconds')).toBe('histogram');
    const buckets = find(p, 't_duration_seconds_bucket', { route: 'a' });
    expect(buckets.map((b) => b.labels.le)).toEqual(['0.1', '0.5', '1', '+Inf']);
    expect(buckets.map((b) => Number(b.value))).toEqual([2, 4, 6, 8]);
    for (let i = 1; i < buckets.length; i++) expect(Number(buckets[i]!.value)).toBeGreaterThanOrEqual(Number(buckets[i - 1]!.value));
    expect(one(p, 't_duration_seconds_count', { route: 'a' })).toBe('8');
    expect(one(p, 't_duration_seconds_bucket', { route: 'a', le: '+Inf' })).toBe(one(p, 't_duration_seconds_count', { route: 'a' }));
    expect(Number(one(p, 't_duration_seconds_sum', { route: 'a' }))).toBeCloseTo(values.reduce((a, b) => a + b), 9);
    expect(find(p, 't_duration_seconds_bucket', { route: 'b' }).map((b) => b.value)).toEqual(['0', '1', '1', '1']);
    // The label order: the metric's labels, then le.
    expect(text).toContain('t_duration_seconds_bucket{route="a",le="0.1"} 2');
  });

  it('keeps a bigint counter exact beyond 2^53 and prints it as an integer', async () => {
    const r = new Registry();
    const c = r.register(new BigIntCounter('t_nano_total', 'Nano.', ['model']));
    const big = 2n ** 53n + 1n; // not representable as a double
    c.inc(['m'], big);
    c.inc(['m'], big);
    c.inc(['m'], 1n);
    c.inc(['huge'], 123456789012345678901234567890n);
    const p = parse(await r.render());
    expect(one(p, 't_nano_total', { model: 'm' })).toBe((2n * big + 1n).toString());
    expect(one(p, 't_nano_total', { model: 'm' })).toBe('18014398509481987');
    expect(one(p, 't_nano_total', { model: 'huge' })).toBe('123456789012345678901234567890');
    expect(() => c.inc(['m'], -1n)).toThrow(RangeError);
  });

  it('reads callback gauges at scrape time; a failing, slow or non-numeric callback leaves the sample out', async () => {
    const r = new Registry();
    let n = 1;
    r.register(new Gauge('t_sync', 'Sync.').collectWith(() => n));
    r.register(new Gauge('t_async', 'Async.').collectWith(async () => n * 10));
    r.register(new Gauge('t_throws', 'Throws.').collectWith(() => { throw new Error('db down'); }));
    r.register(new Gauge('t_rejects', 'Rejects.').collectWith(() => Promise.reject(new Error('db down'))));
    r.register(new Gauge('t_slow', 'Slow.', [], 20).collectWith(() => new Promise<number>(() => undefined)));
    r.register(new Gauge('t_nan', 'Not a number.').collectWith(() => 'x' as unknown as number));
    const set = r.register(new Gauge('t_set', 'Set.', ['pool']));
    set.set(['a'], 4); set.inc(['a']); set.dec(['a'], 2);
    let p = parse(await r.render());
    expect(one(p, 't_sync')).toBe('1');
    expect(one(p, 't_async')).toBe('10');
    expect(one(p, 't_set', { pool: 'a' })).toBe('3');
    for (const name of ['t_throws', 't_rejects', 't_slow', 't_nan']) {
      expect(find(p, name)).toHaveLength(0);
      expect(p.type.get(name)).toBe('gauge');
    }
    n = 2;
    p = parse(await r.render());
    expect(one(p, 't_sync')).toBe('2');
    expect(one(p, 't_async')).toBe('20');
  });

  it('refuses bad names, duplicate metrics, wrong label counts and decreasing counters', () => {
    const r = new Registry();
    expect(() => new Counter('bad-name', 'x')).toThrow(TypeError);
    expect(() => new Counter('ok_total', 'x', ['bad-label'])).toThrow(TypeError);
    expect(() => new Counter('ok_total', 'x', ['__reserved'])).toThrow(TypeError);
    expect(() => new Histogram('h', 'x', ['le'], [1])).toThrow(TypeError);
    expect(() => new Histogram('h', 'x', [], [])).toThrow(TypeError);
    expect(() => new Histogram('h', 'x', [], [1, 1])).toThrow(TypeError);
    const c = r.register(new Counter('dup_total', 'x', ['a']));
    expect(() => r.register(new Counter('dup_total', 'y'))).toThrow(/already registered/);
    expect(() => c.inc(['x', 'y'])).toThrow(TypeError);
    expect(() => c.inc(['x'], -1)).toThrow(RangeError);
    expect(() => c.inc(['x'], Number.NaN)).toThrow(RangeError);
    expect(() => new Gauge('g', 'x', ['a']).collectWith(() => 1)).toThrow(TypeError);
  });
});

describe('GatewayMetrics', () => {
  const NAMES = [
    'gateway_requests_total', 'gateway_request_duration_seconds', 'gateway_upstream_errors_total',
    'gateway_tokens_metered_total', 'gateway_cost_metered_nano_usd_total', 'gateway_holds_open',
    'gateway_limiter_rejections_total', 'gateway_streams_open', 'gateway_config_reloads_total',
    'gateway_process_resident_memory_bytes', 'gateway_process_uptime_seconds', 'gateway_log_lines_dropped_total',
  ];

  it('declares every metric with HELP and TYPE, and pre-creates the bounded series at 0', async () => {
    const m = new GatewayMetrics();
    const text = await m.render();
    checkFamilies(text);
    const p = parse(text);
    for (const name of NAMES) {
      expect(p.help.has(name), name).toBe(true);
      expect(p.type.has(name), name).toBe(true);
    }
    expect(p.type.get('gateway_request_duration_seconds')).toBe('histogram');
    expect(p.type.get('gateway_holds_open')).toBe('gauge');
    expect(p.type.get('gateway_cost_metered_nano_usd_total')).toBe('counter');
    expect(find(p, 'gateway_limiter_rejections_total')).toHaveLength(6);
    expect(one(p, 'gateway_config_reloads_total', { result: 'ok' })).toBe('0');
    expect(one(p, 'gateway_config_reloads_total', { result: 'error' })).toBe('0');
    expect(one(p, 'gateway_streams_open')).toBe('0');
    expect(find(p, 'gateway_holds_open')).toHaveLength(0); // no source yet
    expect(Number(one(p, 'gateway_process_resident_memory_bytes'))).toBeGreaterThan(1_000_000);
    expect(Number(one(p, 'gateway_process_uptime_seconds'))).toBeGreaterThan(0);
    expect(p.type.get('gateway_log_lines_dropped_total')).toBe('counter');
    expect(DURATION_BUCKETS_SECONDS[0]).toBe(0.0005);
    expect(DURATION_BUCKETS_SECONDS.at(-1)).toBe(60);
  });

  it('counts the log lines a destination dropped past its bound', async () => {
    const m = new GatewayMetrics();
    const before = Number(one(parse(await m.render()), 'gateway_log_lines_dropped_total'));
    // A write that never finishes: the second line waits, the third is past the 10-byte bound. (What
    // still waits at this test process's exit is flushed to /dev/null.)
    const dest = new BatchedFdDestination(openSync('/dev/null', 'w'), 10, () => undefined);
    dest.write('12345678\n');
    await new Promise((ok) => setTimeout(ok, BATCH_MS * 3));
    expect(dest.write('12345678\n')).toBe(true);
    expect(dest.write('12345678\n')).toBe(false);
    expect(Number(one(parse(await m.render()), 'gateway_log_lines_dropped_total'))).toBe(before + 1);
  });

  it('records what the pipeline reports', async () => {
    const m = new GatewayMetrics();
    m.requestFinished('chat-completions', 'openai', 200, 0.012);
    m.requestFinished('chat-completions', 'openai', 200, 0.3);
    m.requestFinished('chat-completions', null, 401, 0.0004);
    m.upstreamError('openai', 503);
    m.upstreamError('openai', 'timeout');
    m.metered('openai', 'gpt-4o', { input: 100, output: 20, cachedInput: 50, cacheWrite: 0, reasoning: 7 }, 2n ** 60n);
    m.metered('openai', 'gpt-4o', { input: 1, output: 0, cachedInput: 0, cacheWrite: 3, reasoning: 0 }, 5n);
    m.metered('openai', 'gpt-4o', { input: -1, output: Number.NaN, cachedInput: 0, cacheWrite: 0, reasoning: 0 }, -5n);
    m.limiterRejected('key', 'tokens');
    m.limiterRejected('key', 'tokens');
    m.limiterRejected('account', 'concurrency');
    m.streamOpened(); m.streamOpened(); m.streamClosed();
    m.configReloaded(true); m.configReloaded(false); m.configReloaded(false);
    let holds = 3;
    m.setHoldsOpen(async () => holds);

    const text = await m.render();
    checkFamilies(text);
    const p = parse(text);
    expect(one(p, 'gateway_requests_total', { route: 'chat-completions', status: '200' })).toBe('2');
    expect(one(p, 'gateway_requests_total', { route: 'chat-completions', status: '401' })).toBe('1');
    expect(one(p, 'gateway_request_duration_seconds_count', { route: 'chat-completions', provider: 'openai' })).toBe('2');
    expect(one(p, 'gateway_request_duration_seconds_bucket', { route: 'chat-completions', provider: 'none', le: '0.0005' })).toBe('1');
    expect(one(p, 'gateway_request_duration_seconds_bucket', { route: 'chat-completions', provider: 'openai', le: '0.025' })).toBe('1');
    expect(one(p, 'gateway_request_duration_seconds_bucket', { route: 'chat-completions', provider: 'openai', le: '+Inf' })).toBe('2');
    expect(one(p, 'gateway_upstream_errors_total', { provider: 'openai', code: '503' })).toBe('1');
    expect(one(p, 'gateway_upstream_errors_total', { provider: 'openai', code: 'timeout' })).toBe('1');
    const tokens = (kind: string) => one(p, 'gateway_tokens_metered_total', { provider: 'openai', model: 'gpt-4o', kind });
    expect([tokens('input'), tokens('output'), tokens('cached'), tokens('cache_write'), tokens('reasoning')]).toEqual(['101', '20', '50', '3', '7']);
    expect(one(p, 'gateway_cost_metered_nano_usd_total', { provider: 'openai', model: 'gpt-4o' })).toBe((2n ** 60n + 5n).toString());
    expect(one(p, 'gateway_limiter_rejections_total', { scope: 'key', limit: 'tokens' })).toBe('2');
    expect(one(p, 'gateway_limiter_rejections_total', { scope: 'account', limit: 'concurrency' })).toBe('1');
    expect(one(p, 'gateway_limiter_rejections_total', { scope: 'account', limit: 'requests' })).toBe('0');
    expect(one(p, 'gateway_streams_open')).toBe('1');
    expect(one(p, 'gateway_config_reloads_total', { result: 'ok' })).toBe('1');
    expect(one(p, 'gateway_config_reloads_total', { result: 'error' })).toBe('2');
    expect(one(p, 'gateway_holds_open')).toBe('3');
    holds = 0;
    expect(one(parse(await m.render()), 'gateway_holds_open')).toBe('0');
  });

  it('records the charge alone for a meter that counts no tokens (null usage)', async () => {
    const m = new GatewayMetrics();
    m.metered('cohere', 'rerank-pro', null, 2_000_000n);
    const p = parse(await m.render());
    expect(one(p, 'gateway_cost_metered_nano_usd_total', { provider: 'cohere', model: 'rerank-pro' })).toBe('2000000');
    expect(find(p, 'gateway_tokens_metered_total', { provider: 'cohere', model: 'rerank-pro', kind: 'input' })).toEqual([]);
  });

  it('leaves gateway_holds_open out of a scrape when its source fails or hangs, and still renders the rest', async () => {
    const m = new GatewayMetrics({ collectTimeoutMs: 20 });
    m.setHoldsOpen(() => new Promise<number>(() => undefined));
    m.requestFinished('r', 'p', 200, 1);
    let p = parse(await m.render());
    expect(find(p, 'gateway_holds_open')).toHaveLength(0);
    expect(one(p, 'gateway_requests_total', { route: 'r', status: '200' })).toBe('1');
    m.setHoldsOpen(() => { throw new Error('store closed'); });
    p = parse(await m.render());
    expect(find(p, 'gateway_holds_open')).toHaveLength(0);
  });
});
