/**
 * Job kinds (route `job.kind`; spec 4.16): a route whose upstream answers with an asynchronous job
 * the gateway records and polls in the background. The stages ask a kind for what differs from a
 * request that settles itself, and name no kind:
 *  - route: the kind's own request rules, before anything is resolved or reserved (`prepare`);
 *  - admission: how long the hold must outlive the usual margin (the job's deadline);
 *  - meter: the accepted job takes the request's hold over and answers it (`start`; src/pipeline/hold.ts).
 */
import type { CompiledRoute, GatewaySettings } from '../config/types.js';
import type { RouteManifest } from '../generated/manifest-types.js';
import type { RequestContext } from './context.js';
import { videoJobs } from './local/videos.js';
import type { Runtime } from './stage.js';

/** The service behind a job kind, for one request. */
export interface JobService {
  /** Before anything is resolved or reserved: the kind's own request rules (400s). */
  prepare(ctx: RequestContext): Promise<void>;
  /** After the vendor accepted the job: records it with the request's hold and answers it. */
  start(ctx: RequestContext): Promise<void>;
}

/** A job kind: its service (absent from a gateway built without it: an error then) and its hold's lifetime. */
export interface JobKind {
  service(runtime: Runtime): JobService;
  /** How long a job may run: its hold lives this long plus the usual margin. */
  deadlineMs(settings: GatewaySettings): number;
}

type JobKindName = NonNullable<RouteManifest['job']>['kind'];

const JOB_KINDS: Record<JobKindName, JobKind> = {
  video: { service: videoJobs, deadlineMs: (settings) => settings.videoJobs.deadlineMs },
};

/** The job kind of a job route; null for a route that settles its own requests. */
export function jobKindOf(route: CompiledRoute): JobKind | null {
  const kind = route.manifest.job?.kind;
  return kind ? JOB_KINDS[kind] : null;
}
