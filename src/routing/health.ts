/**
 * What the gateway knows of each deployment's health (issue 29 item 5), per process and kept across
 * reloads (by deployment id): requests in flight, an EWMA of time to first byte, recent outcomes for
 * an error rate, and a circuit breaker. `failures` within `window_seconds` open the circuit; open, the
 * deployment is skipped; after `open_seconds` one request probes it (half-open): its success closes
 * the circuit, its failure opens it again. Anchors: Envoy's outlier detection, LiteLLM's cooldowns.
 */
import type { CompiledDeployment, RoutingPolicy } from '../config/types.js';

/** A circuit's state, numbered as `gateway_deployment_circuit_state` reports it. */
export type CircuitState = 'closed' | 'half_open' | 'open';
/** `gateway_deployment_circuit_state` values: 0 closed, 1 half-open, 2 open. */
export const CIRCUIT_STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

/** The EWMA's weight of a new sample. */
const EWMA_ALPHA = 0.2;
/** How many recent outcomes the error rate is computed over. */
const RECENT_OUTCOMES = 100;

/** One deployment's record. */
interface Record_ {
  inflight: number;
  ttfbEwmaMs: number | null;
  /** Times (ms) of failures still inside the circuit's window. */
  failures: number[];
  /** Recent outcomes, true for a failure, newest last (bounded). */
  recent: boolean[];
  openedAt: number | null;
  probing: boolean;
  /** The provider id, for metrics and the admin listing. */
  provider: string;
  /** The state last reported to the listener (half-open is noticed when the state is next read). */
  reported: CircuitState;
}

/** One deployment as `GET /admin/deployments` lists it. */
export interface DeploymentStatus {
  id: string;
  provider: string;
  circuit: CircuitState;
  inflight: number;
  /** Share of failed attempts among the last 100 (0 when none). */
  error_rate: number;
  /** EWMA of the time to the first byte, in ms; null before any success. */
  latency_ms: number | null;
}

/** Called when a circuit changes state (metrics, alerts). */
export type CircuitListener = (deploymentId: string, state: CircuitState) => void;

/** The health of every deployment this process has sent to. */
export class DeploymentHealth {
  private readonly records = new Map<string, Record_>();

  constructor(private readonly now: () => number = Date.now, private readonly onChange: CircuitListener = () => undefined) {}

  private record(d: CompiledDeployment): Record_ {
    let r = this.records.get(d.id);
    if (!r) {
      r = { inflight: 0, ttfbEwmaMs: null, failures: [], recent: [], openedAt: null, probing: false, provider: d.provider.id, reported: 'closed' };
      this.records.set(d.id, r);
    }
    return r;
  }

  /** The circuit's state now: an open circuit past `open_seconds` is half-open. */
  state(d: CompiledDeployment, policy: RoutingPolicy): CircuitState {
    const r = this.records.get(d.id);
    if (!r || r.openedAt === null) return 'closed';
    const state = this.now() - r.openedAt >= policy.circuit.openSeconds * 1000 ? 'half_open' : 'open';
    this.report(d.id, r, state);
    return state;
  }

  private report(id: string, r: Record_, state: CircuitState): void {
    if (r.reported === state) return;
    r.reported = state;
    this.onChange(id, state);
  }

  /** True when a request may go to the deployment now: closed, or half-open with no probe in flight. */
  available(d: CompiledDeployment, policy: RoutingPolicy): boolean {
    const state = this.state(d, policy);
    return state === 'closed' || (state === 'half_open' && !this.records.get(d.id)!.probing);
  }

  /** When the circuit opened (ms), or null when closed: the least recently opened is tried when all are open. */
  openedAt(d: CompiledDeployment): number | null {
    return this.records.get(d.id)?.openedAt ?? null;
  }

  inflight(d: CompiledDeployment): number { return this.records.get(d.id)?.inflight ?? 0; }

  /** The EWMA of time to first byte, or null before any success. */
  latency(d: CompiledDeployment): number | null { return this.records.get(d.id)?.ttfbEwmaMs ?? null; }

  /** An attempt starts; a half-open deployment's attempt is its probe. Pair with exactly one `ended`. */
  started(d: CompiledDeployment, policy: RoutingPolicy): void {
    const r = this.record(d);
    r.inflight += 1;
    if (this.state(d, policy) === 'half_open') r.probing = true;
  }

  /** The attempt answered (its first byte after `ttfbMs`): a half-open circuit closes. */
  succeeded(d: CompiledDeployment, ttfbMs: number): void {
    const r = this.record(d);
    r.ttfbEwmaMs = r.ttfbEwmaMs === null ? ttfbMs : r.ttfbEwmaMs + EWMA_ALPHA * (ttfbMs - r.ttfbEwmaMs);
    this.remember(r, false);
    if (r.failures.length > 0) r.failures = [];
    r.probing = false;
    r.openedAt = null;
    this.report(d.id, r, 'closed');
  }

  /** The attempt failed in a way that counts against the deployment (not the client's own 4xx). */
  failed(d: CompiledDeployment, policy: RoutingPolicy): void {
    const r = this.record(d);
    const now = this.now();
    this.remember(r, true);
    const wasProbe = r.probing;
    r.probing = false;
    const since = now - policy.circuit.windowSeconds * 1000;
    r.failures = r.failures.filter((t) => t > since);
    r.failures.push(now);
    if (wasProbe || (r.openedAt === null && r.failures.length >= policy.circuit.failures)) {
      r.openedAt = now;
      this.report(d.id, r, 'open');
    }
  }

  /** The attempt is over (answered, failed or abandoned). */
  ended(d: CompiledDeployment): void {
    const r = this.record(d);
    r.inflight = Math.max(0, r.inflight - 1);
  }

  /** A probe that neither succeeded nor failed (the client left): the next request may probe. */
  abandoned(d: CompiledDeployment): void {
    const r = this.records.get(d.id);
    if (r) r.probing = false;
  }

  private remember(r: Record_, failure: boolean): void {
    r.recent.push(failure);
    if (r.recent.length > RECENT_OUTCOMES) r.recent.shift();
  }

  /** Every deployment of `deployments` with its state, for the admin API. */
  describe(deployments: Iterable<{ deployment: CompiledDeployment; policy: RoutingPolicy }>): DeploymentStatus[] {
    const out: DeploymentStatus[] = [];
    for (const { deployment: d, policy } of deployments) {
      const r = this.records.get(d.id);
      const failures = r ? r.recent.filter(Boolean).length : 0;
      out.push({
        id: d.id, provider: d.provider.id, circuit: this.state(d, policy), inflight: r?.inflight ?? 0,
        error_rate: r && r.recent.length > 0 ? failures / r.recent.length : 0,
        latency_ms: r?.ttfbEwmaMs === null || r?.ttfbEwmaMs === undefined ? null : Math.round(r.ttfbEwmaMs * 10) / 10,
      });
    }
    return out;
  }
}
