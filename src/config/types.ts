/** The compiled, immutable configuration one request runs on (swapped whole on hot reload). */
import type { ValidateFunction } from 'ajv';
import type { RouteManifest, ServiceType } from '../generated/manifest-types.js';

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
  created: number;
  maxOutputTokens: number;
  billing: { unit: 'token'; per: bigint; prices: TokenPrices; priceText: Record<string, string>; tools: Record<string, bigint>; toolText: Record<string, string> };
}

/** One upstream, with its location and credential resolved from the environment. */
export interface CompiledProvider {
  id: string;
  format: string;
  baseUrl: string;
  apiKey: string | null;
  authScheme: 'bearer' | 'x-api-key';
  simulated: boolean;
  timeouts: { connectMs: number; headersMs: number; idleMs: number };
  operations: Record<string, { method: 'GET' | 'POST'; path: string }>;
}

/** One route with its schemas compiled. */
export interface CompiledRoute {
  manifest: RouteManifest;
  file: string;
  validateRequest: ValidateFunction | null;
  streamPointer: string[] | null;
  serviceTypes: ReadonlySet<ServiceType>;
  billable: boolean;
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
