/** Choosing a deployment (src/routing/select.ts, issue 29 item 5): priorities, strategies, open circuits. */
import { describe, expect, it } from 'vitest';
import { DeploymentHealth } from '../../src/routing/health.js';
import { chooseDeployment, leastRecentlyOpened } from '../../src/routing/select.js';
import { clock, deployment, policy } from './fixtures.js';

/** A deterministic random sequence (a linear congruential generator). */
function seeded(seed = 42): () => number {
  let x = seed;
  return () => { x = (x * 1103515245 + 12345) % 2 ** 31; return x / 2 ** 31; };
}

function open(health: DeploymentHealth, d: ReturnType<typeof deployment>, p = policy()): void {
  for (let i = 0; i < p.circuit.failures; i++) health.failed(d, p);
}

describe('chooseDeployment', () => {
  it('shares requests by weight within the lowest priority', () => {
    const health = new DeploymentHealth(clock().now);
    const a = deployment('p/a', 3);
    const b = deployment('p/b', 1);
    const backup = deployment('p/backup', 100, 1);
    const random = seeded();
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const d = chooseDeployment([a, b, backup], new Set(), policy(), health, random)!;
      counts.set(d.id, (counts.get(d.id) ?? 0) + 1);
    }
    expect(counts.get('p/backup')).toBeUndefined();
    expect(counts.get('p/a')! / 4000).toBeGreaterThan(0.72);
    expect(counts.get('p/a')! / 4000).toBeLessThan(0.78);
  });

  it('moves to a higher priority when the lower ones are ruled out or open', () => {
    const health = new DeploymentHealth(clock().now);
    const a = deployment('p/a');
    const backup = deployment('p/backup', 1, 1);
    expect(chooseDeployment([a, backup], new Set([a]), policy(), health)).toBe(backup);
    open(health, a);
    expect(chooseDeployment([a, backup], new Set(), policy(), health)).toBe(backup);
  });

  it('least_inflight picks the deployment with the fewest requests in flight', () => {
    const health = new DeploymentHealth(clock().now);
    const a = deployment('p/a');
    const b = deployment('p/b');
    const p = policy({ strategy: 'least_inflight' });
    health.started(a, p); health.started(a, p); health.started(b, p);
    expect(chooseDeployment([a, b], new Set(), p, health)).toBe(b);
    health.ended(a); health.ended(a);
    expect(chooseDeployment([a, b], new Set(), p, health)).toBe(a);
  });

  it('latency picks the lowest time to first byte, trying an unmeasured deployment first', () => {
    const health = new DeploymentHealth(clock().now);
    const a = deployment('p/a');
    const b = deployment('p/b');
    const c = deployment('p/c');
    const p = policy({ strategy: 'latency' });
    health.succeeded(a, 300);
    health.succeeded(b, 80);
    expect(chooseDeployment([a, b, c], new Set(), p, health)).toBe(c);
    health.succeeded(c, 500);
    expect(chooseDeployment([a, b, c], new Set(), p, health)).toBe(b);
  });

  it('gives null when every deployment is open; the least recently opened is then tried', () => {
    const c = clock();
    const health = new DeploymentHealth(c.now);
    const a = deployment('p/a');
    const b = deployment('p/b');
    open(health, b);
    c.advance(1000);
    open(health, a);
    expect(chooseDeployment([a, b], new Set(), policy(), health)).toBeNull();
    expect(leastRecentlyOpened([a, b], new Set(), health)).toBe(b);
    expect(leastRecentlyOpened([a, b], new Set([b]), health)).toBe(a);
    expect(leastRecentlyOpened([a, b], new Set([a, b]), health)).toBeNull();
  });

  it('a lone deployment: itself until ruled out or open', () => {
    const health = new DeploymentHealth(clock().now);
    const a = deployment('p/a');
    expect(chooseDeployment([a], new Set(), policy(), health)).toBe(a);
    expect(chooseDeployment([a], new Set([a]), policy(), health)).toBeNull();
    open(health, a);
    expect(chooseDeployment([a], new Set(), policy(), health)).toBeNull();
  });
});
