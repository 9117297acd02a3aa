/** The Stage contract: compiled once per route at boot or reload; null means the stage is absent. */
import type { CompiledRoute } from '../config/types.js';
import type { DeploymentHealth } from '../routing/health.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Grants } from '../ledger/grants/index.js';
import type { Limiter } from '../limits/types.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { AuthCache } from './auth-cache.js';
import type { FileServices } from '../files/index.js';
import type { RequestContext, StageHandler } from './context.js';
import type { Logger } from '../observability/log.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/traces.js';
import type { Resolver } from '../upstream/fetch/index.js';
import type { VideoJobs } from '../videos/service.js';
import type { MediaOperations } from './operation-ids.js';
import type { ResponseRecords } from '../responses/records.js';
import type { Clock } from '../clock.js';

/** Long-lived services the stages use; shared by every configuration generation. */
export interface Runtime {
  ledger: Ledger;
  limiter: Limiter;
  /** Optional metrics sink (absent in unit tests). */
  metrics?: Pick<GatewayMetrics, 'requestFinished' | 'upstreamError' | 'metered' | 'limiterRejected' | 'streamOpened' | 'streamClosed'> & Partial<Pick<GatewayMetrics, 'upstreamAttempt'>>;
  /** Optional request log (one structured line per request). */
  logger?: Logger;
  /** Requests in flight, for a draining shutdown. */
  inflight: Set<RequestContext>;
  upstream: UpstreamClient;
  auth: AuthCache;
  /** Blob store and file services (absent in unit tests that need none). */
  files?: FileServices;
  /** Video jobs (spec 4.16; absent in unit tests that need none). */
  videos?: VideoJobs;
  /** Operation ids of images and video (spec 4.14, 4.16; absent in unit tests that need none). */
  operations?: MediaOperations;
  /** Resolves the host names of URL inputs (tests inject one that maps names to loopback); default the system's. */
  urlResolver?: Resolver;
  /** Every deployment's circuit, in-flight count and latency (issue 29 item 5), per process. */
  deployments: DeploymentHealth;
  /** Stored responses (issue 31 item 3; absent in unit tests that need none). */
  responses?: ResponseRecords;
  /** Credit grants (issue 30); absent: every request reserves and settles on its own. */
  grants?: Grants;
  /** The gateway's clock for key expiry and key budget periods (issue 33 item 2); absent: the system clock. */
  clock?: Clock;
  /** OpenTelemetry traces (issue 33 item 1); absent when no OTLP endpoint is set. */
  tracing?: Tracing;
  /** The alerts' outbox (issue 33 item 3): a key refused for its budget is reported to it. */
  alerts?: { keyBudgetRefused(keyId: string): Promise<void> };
}

/** One of the seven fixed stages. */
export interface Stage {
  readonly name: 'auth' | 'validate' | 'route' | 'admission' | 'translate' | 'forward' | 'meter';
  compile(route: CompiledRoute, runtime: Runtime): StageHandler | null;
}
