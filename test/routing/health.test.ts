/** The circuit breaker, in-flight counts, latency and error rate of src/routing/health.ts (issue 29 item 5). */
import { describe, expect, it } from 'vitest';
import { DeploymentHealth, type CircuitState } from '../../src/routing/health.js';
import { clock, deployment, policy } from './fixtures.js';

describe('deployment health', () => {
  const p = policy({ circuit: { failures: 3, windowSeconds: 10, openSeconds: 5 } });

  it('opens after `failures` within the window, half-opens after open_seconds, closes on a probe that succeeds', () => {
    const c = clock();
    const changes: Array<[string, CircuitState]> = [];
    const health = new DeploymentHealth(c.now, (id, state) => changes.push([id, state]));
    const d = deployment('a/m');
    for (let i = 0; i < 2; i++) { health.started(d, p); health.failed(d, p); health.ended(d); }
    expect(health.state(d, p)).toBe('closed');
    health.started(d, p); health.failed(d, p); health.ended(d);
    expect(health.state(d, p)).toBe('open');
    expect(health.available(d, p)).toBe(false);
    c.advance(5_000);
    expect(health.state(d, p)).toBe('half_open');
    expect(health.available(d, p)).toBe(true);
    health.started(d, p);
    // One probe at a time.
    expect(health.available(d, p)).toBe(false);
    health.succeeded(d, 120);
    health.ended(d);
    expect(health.state(d, p)).toBe('closed');
    expect(changes).toEqual([['a/m', 'open'], ['a/m', 'half_open'], ['a/m', 'closed']]);
  });

  it('failures older than the window do not count', () => {
    const c = clock();
    const health = new DeploymentHealth(c.now);
    const d = deployment('a/m');
    for (let i = 0; i < 2; i++) health.failed(d, p);
    c.advance(10_001);
    health.failed(d, p);
    expect(health.state(d, p)).toBe('closed');
  });

  it('a failed probe opens the circuit again for a full open_seconds', () => {
    const c = clock();
    const health = new DeploymentHealth(c.now);
    const d = deployment('a/m');
    for (let i = 0; i < 3; i++) health.failed(d, p);
    c.advance(5_000);
    health.started(d, p);
    health.failed(d, p);
    health.ended(d);
    expect(health.state(d, p)).toBe('open');
    c.advance(4_999);
    expect(health.state(d, p)).toBe('open');
    c.advance(1);
    expect(health.state(d, p)).toBe('half_open');
  });

  it('an abandoned probe lets the next request probe', () => {
    const c = clock();
    const health = new DeploymentHealth(c.now);
    const d = deployment('a/m');
    for (let i = 0; i < 3; i++) health.failed(d, p);
    c.advance(5_000);
    health.started(d, p);
    expect(health.available(d, p)).toBe(false);
    health.abandoned(d);
    health.ended(d);
    expect(health.available(d, p)).toBe(true);
  });

  it('counts requests in flight, averages time to first byte, and reports the error rate', () => {
    const health = new DeploymentHealth(clock().now);
    const d = deployment('a/m');
    health.started(d, p); health.started(d, p);
    expect(health.inflight(d)).toBe(2);
    health.succeeded(d, 100); health.ended(d);
    health.failed(d, p); health.ended(d);
    expect(health.inflight(d)).toBe(0);
    health.succeeded(d, 200);
    // EWMA with weight 0.2: 100, then 100 + 0.2 * (200 - 100).
    expect(health.latency(d)).toBeCloseTo(120, 6);
    const [status] = health.describe([{ deployment: d, policy: p }]);
    expect(status).toEqual({ id: 'a/m', provider: 'a', circuit: 'closed', inflight: 0, error_rate: 1 / 3, latency_ms: 120 });
  });
});
