/** Releases deferred through a store outage are retried together until the store answers. */
import { describe, expect, it } from 'vitest';
import { DependencyUnavailableError } from '../../src/errors.js';
import { ReleaseBacklog } from '../../src/ledger/release-backlog.js';

const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

describe('ReleaseBacklog', () => {
  it('retries every id while the store is away, then releases each once', async () => {
    let storeUp = false;
    const released: string[] = [];
    const backlog = new ReleaseBacklog(async (id) => {
      if (!storeUp) throw new DependencyUnavailableError('store', 'down');
      released.push(id);
    });
    backlog.add('h1');
    backlog.add('h2');
    backlog.add('h1');
    await sleep(350);
    expect(backlog.size).toBe(2);
    expect(released).toEqual([]);
    storeUp = true;
    const deadline = Date.now() + 5_000;
    while (backlog.size > 0 && Date.now() < deadline) await sleep(50);
    expect(released.sort()).toEqual(['h1', 'h2']);
    backlog.close();
  });

  it('drops an id whose release fails for another reason, and keeps at most `max` ids', async () => {
    const backlog = new ReleaseBacklog(async () => { throw new Error('bug'); }, 2);
    backlog.add('a');
    backlog.add('b');
    backlog.add('c');
    expect(backlog.size).toBe(2);
    await sleep(300);
    expect(backlog.size).toBe(0);
    backlog.close();
  });
});
