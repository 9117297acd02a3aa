/** The compiled, immutable configuration one request runs on (swapped whole on hot reload). */
import type { AlertSettings } from '../alerts/settings.js';
import type { ValidateFunction } from 'ajv';
import type { RouteManifest, ServiceType } from '../generated/manifest-types.js';
import type { Limits } from '../limits/types.js';
import type { MultipartSpec } from '../bodies/multipart.js';
import type { RawBodySpec } from '../bodies/raw.js';
import type { ParamPolicy } from './param-policy.js';
import type { UsageDialect } from './usage-dialect.js';
import type { KeyPool } from '../upstream/key-pool.js';
import type { AccessTokens } from '../upstream/google-service-account.js';
import type { CompiledSigV4 } from '../upstream/sigv4-auth.js';
import type { GrantSettings } from '../ledger/grants/settings.js';

/** Token prices of an offering, in nano-USD per `per` tokens. */
export interface TokenPrices {
  input: bigint; output: bigint; cachedInput: bigint; cacheWrite: bigint;
  /** Input tokens that are images (spec 4.14, gpt-image-1's image_tokens); the input price when not declared. */
  imageInput: bigint;
}

/**
 * One priced variant of a non-token offering (issue 31 item 8, `billing.variants`): the request values
 * it applies to, compared as text, and its price in nano-USD per `per` units.
 */
export interface PriceVariant { when: Readonly<Record<string, string>>; price: bigint; priceText: string }

/** A model's own limits on one multipart file part of a route (spec 4.14: the model may accept fewer references). */
export interface OfferingFileLimit { max?: number; maxBytes?: number; mime?: ReadonlySet<string>; square?: boolean }

/** One model offering as the pipeline sees it. */
export interface CompiledOffering {
  id: string;
  /**
   * Other ids the offering answers to (issue 31 item 4: the vendors' dated ids), accepted wherever a
   * model id is and billed as the offering; unique across every id and alias (checked at load).
   * Always set by compile; optional so that a hand-built offering (a unit test's) needs none.
   */
  aliases?: readonly string[];
  /** A human-readable name (Anthropic's models API `display_name`); the id when absent. */
  displayName?: string;
  upstreamModel: string;
  providerId: string;
  serviceType: ServiceType;
  availability: 'available' | 'coming_soon' | 'unavailable';
  enabled: boolean;
  /** Responses-passthrough (spec 4.2): served natively by a responses operation. */
  nativeResponses: boolean;
  /** The model takes the vendor's structured output (`structured_output:`, issue 31 item 1). */
  structuredOutput: boolean;
  created: number;
  /** Output tokens the model can produce: the cap a client's max output may not exceed. */
  maxOutputTokens: number;
  /** Input plus output tokens the model can attend to (token-billed offerings; shown in the catalogue). */
  contextWindow: number;
  /**
   * Prices in nano-USD per `per` units. Token offerings use `prices` (and `tools`); every other unit
   * one `price` (spec 1), or `variants` priced by request values (issue 31 item 8; `price` is then the
   * cheapest variant's, for ordering only; absent `variants`: none). The other side is zero, never read.
   */
  billing: { unit: BillingUnit; per: bigint; prices: TokenPrices; price: bigint; priceText: Record<string, string>; tools: Record<string, bigint>; toolText: Record<string, string>; variants?: readonly PriceVariant[] };
  /** Built-in skills the model can run (spec 4.6 support table). */
  skills: ReadonlySet<string>;
  /** The model's own parameter policies, applied after the route's (e.g. voice settings a speech model refuses, spec 4.8). */
  params?: Readonly<Record<string, ParamPolicy>>;
  /** The provider operations the model can be used with (spec 4.14: dall-e-3 cannot edit); null: all of them. */
  operations?: ReadonlySet<string> | null;
  /** The model's own limits on a route's multipart file parts, by part name (checked before anything is reserved). */
  files?: Readonly<Record<string, OfferingFileLimit>>;
  /**
   * The sources that serve the offering (issue 29 item 1), at least one: the manifest's `deployments`,
   * or the offering's own provider and upstream model when it lists none. Set once every provider is
   * compiled; the catalogue, price and billing are the offering's whichever deployment serves.
   */
  deployments: readonly CompiledDeployment[];
  /**
   * The deployments serving a route, for the routes some of them cannot serve (issue 32 item 4: a
   * model on Anthropic, Bedrock and Vertex, of which only Anthropic counts tokens); a route absent
   * here is served by all of them.
   */
  routeDeployments?: ReadonlyMap<CompiledRoute, readonly CompiledDeployment[]>;
  /** Offering ids tried in order after every deployment failed with a retryable error (item 4). */
  fallbacks: readonly string[];
  /** Offering ids tried in order on `context_length_exceeded`. */
  contextWindowFallbacks: readonly string[];
  /** Offering ids tried in order on `content_policy_violation` (none by default). */
  contentPolicyFallbacks: readonly string[];
  /** The retry and fail-over policy: `routing:` of gateway.config.yaml with the offering's own `routing:` on top. */
  routing: RoutingPolicy;
  /** How a stream cut after content is continued on another source (item 6); null: it is not. */
  continuation: 'prefill' | null;
}

/**
 * One source of an offering (issue 29 item 1): a provider and the model name it is asked for there.
 * `offering` is the offering as this deployment serves it (the same id, prices and billing; its
 * `upstreamModel` and `providerId` this deployment's): translators read the model name from it.
 */
export interface CompiledDeployment {
  /** `<provider>/<upstream_model>` unless the manifest names it. */
  id: string;
  provider: CompiledProvider;
  offering: CompiledOffering;
  /** Share among the deployments of its priority (weighted strategy); default 1. */
  weight: number;
  /** Lower is tried first; higher ones are backups; default 0. */
  priority: number;
}

/** How the healthy deployments of the lowest priority share requests (issue 29 item 5). */
export type RoutingStrategy = 'weighted' | 'least_inflight' | 'latency';

/** `routing:` (issue 29 item 3), durations in milliseconds. */
export interface RoutingPolicy {
  /** Upstream attempts of one request, all deployments and fallbacks together (default 3). */
  maxAttempts: number;
  /** Retries on the deployment that just failed before moving on (default 1). */
  retrySameDeployment: number;
  /** Full-jitter backoff between retries: initial 250, max 4000. */
  backoffMs: { initial: number; max: number };
  /** A longer Retry-After (or retry-after-ms) moves on to the next deployment instead of waiting (default 5000). */
  retryAfterMaxMs: number;
  /** The whole request's deadline (default 90000). */
  deadlineMs: number;
  /** A stream's first content event must arrive within this (null: off, the default). */
  firstTokenTimeoutMs: number | null;
  /** Longest silence between a stream's events (default 30000). */
  streamIdleTimeoutMs: number;
  strategy: RoutingStrategy;
  /** Each deployment's circuit breaker: `failures` within `windowSeconds` open it for `openSeconds`. */
  circuit: { failures: number; windowSeconds: number; openSeconds: number };
}

/** A vendor's built-in skill (spec 4.6), as GET /v1/skills lists it. */
export interface BuiltinSkill { id: string; displayTitle: string; latestVersion: string; createdAt: string }

/** A billing unit of the catalogue (spec 1); routes meter the units they serve. */
export type BillingUnit = 'token' | 'character' | 'text_record' | 'search' | 'record' | 'page' | 'feature' | 'second' | 'image' | 'megapixel' | 'minute';

/** One upstream, with its location and credential resolved from the environment. */
export interface CompiledProvider {
  id: string;
  baseUrl: string;
  /**
   * The provider's credentials (`auth.key`, or each of `auth.keys` that is set), used in turn
   * (issue 29 item 2). Empty when it has none (the simulator). The pool's resting and removed keys
   * live as long as this compiled configuration: a reload brings them all back.
   */
  keys: KeyPool;
  /**
   * The credential's header, and the text before the key in it (`Authorization: Bearer <key>`);
   * `tokens` when the key is exchanged for an access token first (google-service-account).
   */
  auth: { header: string; prefix: string; tokens?: AccessTokens | null };
  /** The `sigv4` scheme's signing parameters (issue 32 item 2): each request is signed once its body is final; absent or null for header schemes. */
  sigv4?: CompiledSigV4 | null;
  simulated: boolean;
  /** Static headers sent on every upstream request. */
  headers: Readonly<Record<string, string>>;
  timeouts: { connectMs: number; headersMs: number; idleMs: number };
  operations: Record<string, CompiledOperation>;
  /** The built-in skills this provider runs, and their source value; null when it runs none. */
  skills: { source: string; list: BuiltinSkill[] } | null;
}

/** What an operation's upstream request body is (provider manifest `request`; issue 9 point 3). */
export type UpstreamRequestKind = 'json' | 'multipart' | 'raw';

/** What an operation answers (provider manifest `answer.type`): sse streams when the request asks to. */
export type UpstreamAnswerKind = 'json' | 'sse' | 'event-stream' | 'binary';

/** One upstream operation: where it is, and the wire format its translator speaks. */
export interface CompiledOperation {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /**
   * The path (with its static query) sent instead of `path` when the request streams (the manifest's
   * `stream_path`: a vendor whose streaming is another method, Gemini's :streamGenerateContent,
   * Vertex's :streamRawPredict); absent or null: `path`.
   */
  streamPath?: string | null;
  format: string;
  /**
   * The body a POST sends (the manifest's `request`, json when absent); a translation producing
   * another kind is refused before sending (src/upstream/client.ts).
   */
  request: UpstreamRequestKind;
  /** What it answers (the manifest's `answer.type`, json when absent). */
  answer: UpstreamAnswerKind;
  /** Static query parameters (the vendor's api-version), already encoded: `?api-version=3.0`, or ''. */
  query: string;
  /** The answer is a job to poll to completion inside the request; null for a direct answer. */
  poll: CompiledPoll | null;
  /** A binary answer (bytes, not JSON) and its largest size; null for JSON. */
  binary: { maxBytes: number } | null;
  /** Static headers of this operation only, on top of the provider's. */
  headers: Readonly<Record<string, string>>;
  /** Headers added only when a request uses a feature (`files`, `skills`), by feature name. */
  features: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** How the vendor reports usage where it differs from OpenAI's chat format (issue 32); absent or null: as OpenAI. */
  usage?: UsageDialect | null;
  /** Edits of the translated JSON body (manifest `body`): top-level fields removed, then set; absent or null: none. */
  bodyEdits?: BodyEdits | null;
  /** The operation a streaming request is sent to instead (manifest `stream_operation`); absent or null: this one. */
  streamOperation?: string | null;
}

/** A vendor dialect's edits of a JSON request body: fields the URL carries removed, fixed ones set. */
export interface BodyEdits { remove: readonly string[]; set: Readonly<Record<string, string>> }

/** How to poll an operation's job (provider manifest `poll`). */
export interface CompiledPoll {
  /** Where the first answer names the job: a header (lower case) or a JSON Pointer into its body; exactly one is set. */
  locationHeader: string | null;
  locationPointer: readonly string[] | null;
  /** Host patterns a polling URL may name besides the base URL's origin (https only; `*.` matches subdomains). */
  hosts: readonly string[];
  statusPointer: readonly string[];
  succeeded: ReadonlySet<string>;
  failed: ReadonlySet<string>;
  /** Statuses of a job refused on content grounds (400 content_policy_violation). */
  moderated: ReadonlySet<string>;
  intervalMs: number;
  deadlineMs: number;
  /** The finished job's output, downloaded and kept by the gateway; null when the answer is the result. */
  output: CompiledPollOutput | null;
}

/** A job's output named by URL (provider manifest `poll.output`). */
export interface CompiledPollOutput {
  pointer: readonly string[];
  hosts: readonly string[];
  maxBytes: number;
  contentTypes: ReadonlySet<string>;
}

/** One operation a proxy route may call, with its translation's parameter policies. */
export interface RouteUpstream {
  operation: string;
  /**
   * Conditions on the model (`nativeResponses`) and on the request: `present`, a JSON Pointer that must
   * hold a value; `absent`, one that must not.
   */
  when: { nativeResponses?: boolean; present?: readonly string[]; absent?: readonly string[] };
  params: Readonly<Record<string, ParamPolicy>>;
  /** Each `{name}` of the operation's path, from a JSON Pointer into the client request. */
  pathParams: Readonly<Record<string, readonly string[]>>;
}

/** A header the client must send, under its name or an alias, with one of the accepted values. */
export interface RequiredHeader { name: string; aliases: string[]; values: ReadonlySet<string>; }

/** One route with its schemas compiled. */
export interface CompiledRoute {
  manifest: RouteManifest;
  file: string;
  validateRequest: ValidateFunction | null;
  streamPointer: readonly string[] | null;
  serviceTypes: ReadonlySet<ServiceType>;
  billable: boolean;
  upstreams: RouteUpstream[];
  requiredHeaders: RequiredHeader[];
  /**
   * The offerings a request without `model` may get (spec 4.9-4.12), in order: the manifest's named
   * default alone, or every available offering the route reaches, cheapest first. The route stage
   * takes the first that can serve the request's input (an image moderation is not a text one).
   */
  defaultModels: readonly string[];
  /** The first of defaultModels (derived), or null when `model` is required or nothing serves the route. */
  readonly defaultModel: string | null;
  /** A multipart body's declared parts and limits; null for a JSON body. */
  multipart: MultipartSpec | null;
  /** A raw body's limits and the file part it becomes; null unless `body.type` is raw. */
  raw: RawBodySpec | null;
}

/** Server-level settings after environment overrides. */
export interface GatewaySettings {
  host: string;
  port: number;
  bodyLimitBytes: number;
  dataDir: string;
  holdTtlMs: number;
  sweepIntervalMs: number;
  /** How often a running stream checkpoints its delivered usage on its hold (issue 8 item 5). */
  checkpointMs: number;
  inputMarginPercent: bigint;
  simulatorPort: number;
  /** Default limits of every account. */
  limits: Limits;
  /** What admission does while the shared limiter backend is down (issue 8 item 2). */
  limiterPolicy: 'fail_closed' | 'fail_open';
  /** Temporary and messages-format files (issue 10). */
  files: FilesSettings;
  /** `operation_ids:` the planned mode of spec 4.14/4.16 (an id required on images and video, 409 on reuse). */
  operationIds: { required: boolean };
  /** `observability.traces:` what a trace span carries (issue 33 item 1); content: prompt and answer text (default false). */
  traces: { content: boolean };
  /** `video_jobs:` the background poller of video jobs (spec 4.16). */
  videoJobs: { pollSchedule: string; deadlineMs: number };
  /** `responses:` stored responses (issue 31 item 3): their lifetime and the sweep deleting expired ones. */
  responses: { storeTtlMs: number; sweepSchedule: string };
  /** `url_inputs:` the SSRF-safe fetcher's allow list of `host:port` entries (issue 11 item 7). */
  urlInputs: { allowHosts: readonly string[] };
  /** `console:` the account console (issue 13). */
  console: ConsoleSettings;
  /** `routing:` the default retry and fail-over policy of every offering (issue 29 item 3). */
  routing: RoutingPolicy;
  /** `billing.grants:` credit grants (issue 30). */
  grants: GrantSettings;
  /** `alerts:` webhook and mail alerts from a durable outbox (issue 33 item 3). */
  alerts: AlertSettings;
}

/** `console:` of gateway.config.yaml, lifetimes in milliseconds. */
export interface ConsoleSettings {
  signupBalanceNano: bigint;
  verificationTtlMs: number;
  sessionTtlMs: number;
  /** Origin for emailed links; null: the request's own. */
  publicUrl: string | null;
  signinAttempts: { perEmail: number; perAddress: number; windowMs: number };
}

/** One temporary-file purpose (spec 2): what it accepts. */
export interface PurposeRule {
  maxBytes: number;
  contentTypes: ReadonlySet<string>;
}

/** `files:` of gateway.config.yaml, lifetimes in milliseconds. */
export interface FilesSettings {
  pendingTtlMs: number;
  finalizedTtlMs: number;
  uploadUrlTtlMs: number;
  readUrlTtlMs: number;
  /** Generated outputs kept for the client (flex images, videos; spec 8: 24 hours). */
  outputTtlMs: number;
  cleanupSchedule: string;
  /** By purpose name, spelled as in spec 2; absent when the config declares none (temporary files are then refused). */
  purposes: ReadonlyMap<string, PurposeRule>;
  /** Messages-format files: quotas per account (uploads and generated outputs together) and lifetime. */
  messages: { maxFileBytes: number; maxFiles: number; maxTotalBytes: number; defaultTtlMs: number };
}

/** Everything compiled from one set of manifests. */
export interface CompiledGateway {
  root: string;
  loadedAt: Date;
  settings: GatewaySettings;
  routes: CompiledRoute[];
  providers: ReadonlyMap<string, CompiledProvider>;
  offerings: ReadonlyMap<string, CompiledOffering>;
  /** Each offering's aliases (issue 31 item 4), alias to offering; look a client's model id up with modelById. */
  aliases: ReadonlyMap<string, CompiledOffering>;
  /** Wire schemas by path under schemas/, for codegen and response checks. */
  wireSchemas: ReadonlyMap<string, object>;
}
