import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/ledger/group-commit.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('GroupCommit', () => {
  it('sends a lone call alone, and batches the calls of one turn and those that arrive while a batch is in flight', async () => {
    const batches: number[][] = [];
    const group = new GroupCommit<number, number>(async (items) => { batches.push(items); await tick(); return items.map((i) => i * 10); }, 1);
    expect(await group.submit(1)).toBe(10);
    const sameTurn = [2, 3].map((i) => group.submit(i));
    await new Promise((r) => setImmediate(r));
    const whileInFlight = [4, 5].map((i) => group.submit(i));
    expect(await Promise.all([...sameTurn, ...whileInFlight])).toEqual([20, 30, 40, 50]);
    expect(batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('keeps at most maxInFlight batches of at most maxBatch items running', async () => {
    let running = 0;
    let most = 0;
    const sizes: number[] = [];
    const group = new GroupCommit<number, number>(async (items) => {
      running += 1; most = Math.max(most, running); sizes.push(items.length);
      await tick();
      running -= 1;
      return items;
    }, 2, 3);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => group.submit(i)));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(2);
    expect(Math.max(...sizes)).toBe(3);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(20);
  });

  it('retries a failed batch item by item, so one bad item fails alone', async () => {
    const calls: number[][] = [];
    const group = new GroupCommit<number, number>(async (items) => {
      calls.push(items);
      await tick();
      if (items.includes(13)) throw new Error('unlucky');
      return items;
    }, 1);
    await group.submit(0);
    const batch = [11, 12, 13, 14].map((i) => group.submit(i).then((v) => ({ ok: v }), (e: Error) => ({ error: e.message })));
    expect(await Promise.all(batch)).toEqual([{ ok: 11 }, { ok: 12 }, { error: 'unlucky' }, { ok: 14 }]);
    expect(calls[1]).toEqual([11, 12, 13, 14]);
    expect(calls.slice(2).map((c) => c.length)).toEqual([1, 1, 1, 1]);
  });

  it('a lone call that fails rejects with its own error, and the group keeps serving', async () => {
    const group = new GroupCommit<string, string>(async (items) => {
      if (items[0] === 'bad') throw new Error('bad item');
      return items;
    });
    await expect(group.submit('bad')).rejects.toThrow('bad item');
    expect(await group.submit('good')).toBe('good');
  });
});
