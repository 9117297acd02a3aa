/** The flusher's timer reads `flush_ms` at each interval, so a config reload changes it (issue 30). */
import { afterEach, expect, it, vi } from 'vitest';
import { GrantBook, type GrantStore } from '../../../src/ledger/grants/book.js';
import { DEFAULT_GRANTS, type GrantSettings } from '../../../src/ledger/grants/settings.js';

const unusedStore: GrantStore = { flush: () => Promise.reject(new Error('no account: the store is never called')) };

afterEach(() => { vi.useRealTimers(); });

it('flushes every flush_ms, and at the new interval once a reload changed it', async () => {
  vi.useFakeTimers();
  let settings: GrantSettings = { ...DEFAULT_GRANTS, flushMs: 100 };
  const book = new GrantBook(unusedStore, () => settings, () => 1000);
  const flush = vi.spyOn(book, 'flush');
  book.start();
  await vi.advanceTimersByTimeAsync(350);
  expect(flush).toHaveBeenCalledTimes(3);
  settings = { ...settings, flushMs: 1000 };
  // The interval already running ends at 400; the next one is 1000 long (until 1400).
  await vi.advanceTimersByTimeAsync(1000);
  expect(flush).toHaveBeenCalledTimes(4);
  await vi.advanceTimersByTimeAsync(1000);
  expect(flush).toHaveBeenCalledTimes(5);
  await book.close(0);
  await vi.advanceTimersByTimeAsync(5000);
  expect(flush).toHaveBeenCalledTimes(5);
});
