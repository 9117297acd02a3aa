/**
 * Per-stage timings of the pipeline, for profiling (`GATEWAY_STAGE_TIMINGS=1`; `npm run bench` reads
 * them). With the flag on, compilePipeline wraps each compiled stage handler once, at boot or reload,
 * in one that records its wall time into `gateway_stage_duration_seconds{stage}` (GET /metrics). With
 * it off, the handlers are used as compiled: not a branch per request, no cost at all.
 *
 * The stages, in the names the bench reports them under:
 *   auth, validate, route, admission, translate   the stages of the same names (admission: the
 *              limiter, the meter's estimate and the reserve, a commit)
 *   upstream   the forward stage: the upstream call and reading its answer (the whole stream, streaming)
 *   settle     the meter stage: the settle (a durable commit) or the release
 *   write      the last write of the answer (`ctx.finish`: the JSON body, or a stream's closing frame)
 * and, apart, each prepared store statement's round trip (`gateway_store_statement_duration_seconds
 * {statement}`: timeStatements), so that the ledger's share of admission and settle can be read
 * against the same statements sent by a bare client.
 * What fastify does before the pipeline (routing, reading and parsing the body) is in no stage, nor
 * in gateway_request_duration_seconds; what the pipeline does after the write (the limiter's
 * bookkeeping, the request log line) is in gateway_request_duration_seconds but in no stage.
 */
import type { Db, Statement } from '../store/types.js';
import { STAGE_DURATIONS, STATEMENT_DURATIONS, type Histogram } from './metrics.js';

/**
 * What a timed stage handler is given, as far as the timing reads it: the answer's last write, which
 * the forward stage leaves behind (the pipeline's request context is one; nothing here imports it).
 */
export interface TimedContext {
  finish: (() => Promise<void> | void) | null;
}

/** A stage handler over a context of type `C` (the pipeline's StageHandler, for its request context). */
export type TimedHandler<C extends TimedContext> = (ctx: C) => Promise<void> | void;

/** The report names of the pipeline's stages. */
const STAGE_LABEL: Readonly<Record<string, string>> = {
  auth: 'auth', validate: 'validate', route: 'route', admission: 'admission', translate: 'translate', forward: 'upstream', meter: 'settle',
};

/** True when GATEWAY_STAGE_TIMINGS=1 (read once, at start). */
export const STAGE_TIMINGS_ENABLED = STAGE_DURATIONS !== null;

/** Runs `call` and records its wall time in seconds under `series`, whether it returns or throws. */
async function observed<T>(histogram: Histogram, series: readonly string[], call: () => T | Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await call();
  } finally {
    histogram.observe(series, (performance.now() - start) / 1000);
  }
}

const WRITE = ['write'];

/** `finish`, timed as the `write` stage. */
function timedFinish(finish: NonNullable<TimedContext['finish']>): NonNullable<TimedContext['finish']> {
  return () => observed(STAGE_DURATIONS!, WRITE, finish);
}

/**
 * The handlers, each wrapped to record its duration; the forward stage's wrapper also times the
 * `finish` it leaves behind. Only called when STAGE_TIMINGS_ENABLED.
 */
export function timeStages<C extends TimedContext>(handlers: readonly TimedHandler<C>[], names: readonly string[]): TimedHandler<C>[] {
  const histogram = STAGE_DURATIONS;
  if (!histogram) return [...handlers];
  return handlers.map((handler, i) => {
    const name = names[i]!;
    const series = [STAGE_LABEL[name] ?? name];
    const forward = name === 'forward';
    return async (ctx: C) => {
      await observed(histogram, series, () => handler(ctx));
      if (forward && ctx.finish) ctx.finish = timedFinish(ctx.finish);
    };
  });
}

/**
 * The store, its prepared statements timed into gateway_store_statement_duration_seconds (from the
 * call, through the pool's checkout, to the rows). Everything else is the store's own. The store as
 * it is when GATEWAY_STAGE_TIMINGS is off.
 */
export function timeStatements(db: Db): Db {
  const histogram = STATEMENT_DURATIONS;
  if (!histogram) return db;
  return {
    kind: db.kind,
    query: (sql, params) => db.query(sql, params),
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
    ...(db.listen ? { listen: db.listen.bind(db) } : {}),
    run: <T>(statement: Statement, params: unknown[]) => observed(histogram, [statement.name], () => db.run<T>(statement, params)),
  };
}
