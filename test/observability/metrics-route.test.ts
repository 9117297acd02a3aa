/** GET /metrics over real HTTP: open, and behind a bearer token. */
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayMetrics, PROMETHEUS_CONTENT_TYPE, registerMetricsRoute } from '../../src/observability/metrics.js';

const TOKEN = 'metrics-token-0123456789';
const apps: FastifyInstance[] = [];

async function serve(token: string | null): Promise<{ url: string; metrics: GatewayMetrics }> {
  const app = Fastify({ logger: false });
  const metrics = new GatewayMetrics();
  registerMetricsRoute(app, metrics, token);
  // The gateway's catch-all must not shadow /metrics.
  app.get('/*', async (_req, reply) => reply.code(404).send({ error: 'catch-all' }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  apps.push(app);
  const address = app.server.address();
  if (!address || typeof address !== 'object') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}`, metrics };
}

afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

describe('GET /metrics', () => {
  it('is open when no token is configured', async () => {
    const { url, metrics } = await serve(null);
    metrics.requestFinished('chat', 'openai', 200, 0.01);
    const res = await request(`${url}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(PROMETHEUS_CONTENT_TYPE);
    expect(PROMETHEUS_CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.body.text();
    expect(text).toContain('# TYPE gateway_requests_total counter');
    expect(text).toContain('gateway_requests_total{route="chat",status="200"} 1');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('requires the bearer token when one is configured', async () => {
    const { url } = await serve(TOKEN);
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`, 'Bearer ', `Bearer ${TOKEN} extra`]) {
      const res = await request(`${url}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      const body = await res.body.json() as { error: Record<string, unknown> };
      expect(body).toEqual({ error: { message: expect.any(String), type: 'authentication_error', code: 'invalid_api_key', param: null } });
      expect(JSON.stringify(body)).not.toContain(TOKEN);
    }
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`]) {
      const res = await request(`${url}/metrics`, { headers: { authorization } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(PROMETHEUS_CONTENT_TYPE);
      expect(await res.body.text()).toContain('# TYPE gateway_process_uptime_seconds gauge');
    }
  });

  it('refuses an empty token at registration', () => {
    expect(() => registerMetricsRoute(Fastify(), new GatewayMetrics(), '')).toThrow(TypeError);
  });
});
