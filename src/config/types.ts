/** The compiled, immutable configuration one request runs on (swapped whole on hot reload). */
import type { ValidateFunction } from 'ajv';
import type { RouteManifest, ServiceType } from '../generated/manifest-types.js';
import type { Limits } from '../limits/types.js';
import type { ParamPolicy } from '../translate/types.js';

/** Token prices of an offering, in nano-USD per `per` tokens. */
export interface TokenPrices { input: bigint; output: bigint; cachedInput: bigint; cacheWrite: bigint; }

/** One model offering as the pipeline sees it. */
export interface CompiledOffering {
  id: string;
  upstreamModel: string;
  providerId: string;
  serviceType: ServiceType;
  availability: 'available' | 'coming_soon' | 'unavailable';
  enabled: boolean;
  /** Responses-passthrough (spec 4.2): served natively by a responses operation. */
  nativeResponses: boolean;
  created: number;
  maxOutputTokens: number;
  billing: { unit: 'token'; per: bigint; prices: TokenPrices; priceText: Record<string, string>; tools: Record<string, bigint>; toolText: Record<string, string> };
}

/** One upstream, with its location and credential resolved from the environment. */
export interface CompiledProvider {
  id: string;
  baseUrl: string;
  apiKey: string | null;
  authScheme: 'bearer' | 'x-api-key';
  simulated: boolean;
  /** Static headers sent on every upstream request. */
  headers: Readonly<Record<string, string>>;
  timeouts: { connectMs: number; headersMs: number; idleMs: number };
  operations: Record<string, { method: 'GET' | 'POST'; path: string; format: string }>;
}

/** One operation a proxy route may call, with its translation's parameter policies. */
export interface RouteUpstream {
  operation: string;
  when: { nativeResponses?: boolean };
  params: Readonly<Record<string, ParamPolicy>>;
}

/** A header the client must send, under its name or an alias, with one of the accepted values. */
export interface RequiredHeader { name: string; aliases: string[]; values: ReadonlySet<string>; }

/** One route with its schemas compiled. */
export interface CompiledRoute {
  manifest: RouteManifest;
  file: string;
  validateRequest: ValidateFunction | null;
  streamPointer: string[] | null;
  serviceTypes: ReadonlySet<ServiceType>;
  billable: boolean;
  upstreams: RouteUpstream[];
  requiredHeaders: RequiredHeader[];
}

/** Server-level settings after environment overrides. */
export interface GatewaySettings {
  host: string;
  port: number;
  bodyLimitBytes: number;
  dataDir: string;
  holdTtlMs: number;
  sweepIntervalMs: number;
  inputMarginPercent: bigint;
  simulatorPort: number;
  /** Default limits of every account. */
  limits: Limits;
}

/** Everything compiled from one set of manifests. */
export interface CompiledGateway {
  root: string;
  loadedAt: Date;
  settings: GatewaySettings;
  routes: CompiledRoute[];
  providers: ReadonlyMap<string, CompiledProvider>;
  offerings: ReadonlyMap<string, CompiledOffering>;
  /** Wire schemas by path under schemas/, for codegen and response checks. */
  wireSchemas: ReadonlyMap<string, object>;
}
