/**
 * Group commit: calls that arrive while earlier ones are in flight, or in the same turn of the event
 * loop, are sent together as one batch. A quiet gateway sends each call at the end of the turn it was
 * made in, alone (one round trip per call); under load N calls share one round trip and one commit,
 * and a hot account row is locked once per batch instead of once per request. Waiting for the end of
 * the turn matters for the embedded store, which runs each query synchronously: the calls made by
 * everything that became ready while it ran are then sent as one batch rather than one by one.
 */

/** Runs a batch; answers one result per item, in order. */
export type BatchRunner<I, O> = (items: I[]) => Promise<O[]>;

interface Pending<I, O> { item: I; resolve: (value: O) => void; reject: (error: unknown) => void; }

/** Batches calls to one runner, with at most `maxInFlight` batches of at most `maxBatch` items running. */
export class GroupCommit<I, O> {
  private queue: Pending<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly run: BatchRunner<I, O>, private readonly maxInFlight = 2, private readonly maxBatch = 256) {}

  /** Queues one item; resolves with its result, or rejects with its own error. */
  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => { this.scheduled = false; this.pump(); });
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      this.queue = batch === this.queue ? [] : this.queue.slice(this.maxBatch);
      this.inFlight += 1;
      void this.send(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async send(batch: Pending<I, O>[]): Promise<void> {
    try {
      const results = await this.run(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // The batch rolled back as a whole: retry its items one by one, so one bad item fails alone.
      await Promise.all(batch.map(async (p) => {
        try { p.resolve((await this.run([p.item]))[0]!); } catch (own) { p.reject(own); }
      }));
    }
  }
}
