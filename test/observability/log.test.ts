/** The JSON logger: line shape, field redaction, and no gateway or vendor key in any line. */
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createLogger, logLevelFromEnv, redactSecrets } from '../../src/observability/log.js';

const GW_KEY = 'gw-AbCdEf0123456789_-ZyXwVuTsRqPoNmLkJiHgFeDcBa0123';
const SK_KEY = 'sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0';
const ANT_KEY = 'sk-ant-api03-AAAABBBBCCCCDDDDEEEE_ffff-gggg';
const SECRETS = [GW_KEY, SK_KEY, ANT_KEY];
// What must never appear: any 8-character run of a key body.
const FRAGMENTS = SECRETS.flatMap((k) => [k, k.slice(3, 11), k.slice(-8)]);

function capture(level: Parameters<typeof createLogger>[0]['level'] = 'trace') {
  const lines: string[] = [];
  let buffer = '';
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      buffer += chunk.toString();
      let i: number;
      while ((i = buffer.indexOf('\n')) >= 0) { lines.push(buffer.slice(0, i)); buffer = buffer.slice(i + 1); }
      done();
    },
  });
  return { log: createLogger({ level, destination }), lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, any>) };
}

function assertClean(lines: string[]): void {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    for (const fragment of FRAGMENTS) expect(line, `leaked ${fragment}`).not.toContain(fragment);
    expect(() => JSON.parse(line)).not.toThrow();
  }
}

describe('redactSecrets', () => {
  it('replaces gateway and vendor keys anywhere in a string', () => {
    expect(redactSecrets(`key ${GW_KEY} and ${SK_KEY}, "${ANT_KEY}"`)).toBe('key gw-[redacted] and sk-[redacted], "sk-[redacted]"');
    expect(redactSecrets(`Bearer ${ANT_KEY}`)).toBe('Bearer sk-[redacted]');
    expect(redactSecrets(`x-api-key=${SK_KEY}&q=1`)).toBe('x-api-key=sk-[redacted]&q=1');
    expect(redactSecrets(`Bearer%20${GW_KEY}`)).toBe('Bearer%20gw-[redacted]');
    expect(redactSecrets(`line\n${GW_KEY}\n`)).toBe('line\ngw-[redacted]\n');
  });

  it('leaves ordinary text alone', () => {
    for (const text of ['task-scheduler-running', 'disk-cache-directory', 'gw-short', 'sk-1234567', 'risk-assessment', 'nothing here']) {
      expect(redactSecrets(text)).toBe(text);
    }
  });
});

describe('createLogger', () => {
  it('writes one JSON object per line with time, a level label, msg and the given fields', () => {
    const { log, parsed } = capture('info');
    log.info({ request_id: 'req_0123', route: 'chat-completions', status: 200, duration_ms: 12.5, account_id: 'acc_1' }, 'request finished');
    log.debug('not at info');
    log.warn('careful');
    const [first, second, ...rest] = parsed();
    expect(rest).toHaveLength(0);
    expect(first).toMatchObject({ level: 'info', msg: 'request finished', request_id: 'req_0123', route: 'chat-completions', status: 200, duration_ms: 12.5, account_id: 'acc_1' });
    expect(Number.isNaN(Date.parse(first!.time))).toBe(false);
    expect(second).toMatchObject({ level: 'warn', msg: 'careful' });
  });

  it('never writes a gateway or vendor key: message, interpolation, nested fields, errors, headers, bindings', () => {
    const { log, lines, parsed } = capture();
    log.info(`authenticated with ${GW_KEY}`);
    log.info('upstream key %s and %o', SK_KEY, { k: ANT_KEY });
    log.info({ deep: { a: { b: { c: { d: { e: { f: { g: `x ${GW_KEY}` } } } } } } }, list: [SK_KEY, [ANT_KEY]] }, 'nested');
    log.error(new Error(`upstream refused ${SK_KEY}`), 'upstream failed');
    log.error(new Error(`bad key ${GW_KEY}`));
    log.error({ err: new Error('outer', { cause: new Error(`inner ${ANT_KEY}`) }) }, 'with cause');
    log.warn({ error: `stringified ${GW_KEY}` }, 'string field');
    log.info({ req: { method: 'POST', url: `/v1/chat?key=${GW_KEY}`, headers: { authorization: `Bearer ${GW_KEY}`, 'x-api-key': SK_KEY, 'user-agent': 'ua' } } }, 'incoming');
    log.info({ headers: { authorization: `Bearer ${SK_KEY}`, 'x-api-key': ANT_KEY } }, 'upstream headers');
    log.info({ provider: { id: 'openai', apiKey: SK_KEY }, cfg: { api_key: ANT_KEY, token: GW_KEY, key: GW_KEY } }, 'config');
    log.info({ [GW_KEY]: 'key as a field name' }, 'odd');
    log.child({ key_hint: GW_KEY }).info({ other: SK_KEY }, 'from a child');
    assertClean(lines);
    expect(lines).toHaveLength(12);

    const out = parsed();
    expect(out[0]!.msg).toBe('authenticated with gw-[redacted]');
    expect(out[2]!.deep.a.b.c.d.e.f.g).toBe('x gw-[redacted]');
    expect(out[3]).toMatchObject({ level: 'error', msg: 'upstream failed', err: { type: 'Error', message: 'upstream refused sk-[redacted]' } });
    expect(out[3]!.err.stack).toContain('sk-[redacted]');
    expect(out[4]!.msg).toBe('bad key gw-[redacted]');
    const incoming = out[7]!;
    expect(incoming.req.headers.authorization).toBe('[redacted]');
    expect(incoming.req.headers['x-api-key']).toBe('[redacted]');
    expect(incoming.req.headers['user-agent']).toBe('ua');
    expect(incoming.req.url).toBe('/v1/chat?key=gw-[redacted]');
    expect(out[8]!.headers).toEqual({ authorization: '[redacted]', 'x-api-key': '[redacted]' });
    expect(out[9]!.provider).toEqual({ id: 'openai', apiKey: '[redacted]' });
    expect(out[9]!.cfg).toEqual({ api_key: '[redacted]', token: '[redacted]', key: '[redacted]' });
  });

  it('redacts an authorization header that holds no recognisable key', () => {
    const { log, lines, parsed } = capture();
    log.info({ req: { headers: { authorization: 'Bearer opaque-admin-token-value' } } }, 'admin call');
    expect(lines.join('\n')).not.toContain('opaque-admin-token-value');
    expect(parsed()[0]!.req.headers.authorization).toBe('[redacted]');
  });

  it('serves as fastify\'s loggerInstance without leaking keys from request logs', async () => {
    const { log, lines, parsed } = capture('info');
    const app = Fastify({ loggerInstance: log });
    app.get('/boom', async (req) => {
      req.log.info({ headers: req.headers }, 'handling');
      throw new Error(`upstream said ${SK_KEY}`);
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const res = await request(`http://127.0.0.1:${port}/boom?api_key=${GW_KEY}`, { headers: { authorization: `Bearer ${GW_KEY}`, 'x-api-key': ANT_KEY } });
      expect(res.statusCode).toBe(500);
      await res.body.dump();
    } finally {
      await app.close();
    }
    assertClean(lines);
    const out = parsed();
    expect(out.some((l) => l.msg === 'handling' && l.headers.authorization === '[redacted]' && l.headers['x-api-key'] === '[redacted]')).toBe(true);
    expect(out.some((l) => l.req?.url === '/boom?api_key=gw-[redacted]')).toBe(true);
    expect(out.some((l) => l.level === 'error' && l.err?.message === 'upstream said sk-[redacted]')).toBe(true);
  });

  it('writes nothing at level silent', () => {
    const { log, lines } = capture('silent');
    log.fatal('nothing');
    log.error(new Error('nothing'));
    expect(lines).toHaveLength(0);
  });
});

describe('logLevelFromEnv', () => {
  it('reads GATEWAY_LOG_LEVEL, defaulting to info', () => {
    expect(logLevelFromEnv({})).toBe('info');
    expect(logLevelFromEnv({ GATEWAY_LOG_LEVEL: '' })).toBe('info');
    expect(logLevelFromEnv({ GATEWAY_LOG_LEVEL: 'debug' })).toBe('debug');
    expect(logLevelFromEnv({ GATEWAY_LOG_LEVEL: ' WARN ' })).toBe('warn');
    expect(logLevelFromEnv({ GATEWAY_LOG_LEVEL: 'silent' })).toBe('silent');
    expect(() => logLevelFromEnv({ GATEWAY_LOG_LEVEL: 'verbose' })).toThrow(/GATEWAY_LOG_LEVEL/);
  });
});
