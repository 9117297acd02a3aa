/**
 * GET /admin/deployments (issue 29 item 7): every deployment of the serving configuration with the
 * offerings it serves, its circuit state, requests in flight, recent error rate, latency (an EWMA of
 * time to first byte) and its provider's keys (usable, resting after a 429, taken out after a 401 or
 * 403). Per process: each replica answers for itself (say so to operators; README "Deployments").
 */
import type { FastifyInstance } from 'fastify';
import type { CompiledDeployment, CompiledGateway, RoutingPolicy } from '../config/types.js';
import type { DeploymentHealth, DeploymentStatus } from '../routing/health.js';

/** What the listing reads: the configuration now serving, and the process's health records. */
export interface DeploymentsSource {
  gateway(): CompiledGateway;
  health: DeploymentHealth;
}

/** One deployment as listed. */
export interface DeploymentView extends DeploymentStatus {
  offerings: string[];
  upstream_model: string;
  weight: number;
  priority: number;
  keys: { usable: number; resting: number; removed: number };
}

/** The listing's rows: one per deployment id, in the configuration's order. */
export function listDeployments(source: DeploymentsSource): DeploymentView[] {
  const byId = new Map<string, { deployment: CompiledDeployment; policy: RoutingPolicy; offerings: string[] }>();
  for (const offering of source.gateway().offerings.values()) {
    for (const deployment of offering.deployments) {
      const entry = byId.get(deployment.id);
      if (entry) entry.offerings.push(offering.id);
      else byId.set(deployment.id, { deployment, policy: offering.routing, offerings: [offering.id] });
    }
  }
  const entries = [...byId.values()];
  const statuses = source.health.describe(entries);
  return statuses.map((status, i) => {
    const { deployment, offerings } = entries[i]!;
    return {
      ...status, offerings, upstream_model: deployment.offering.upstreamModel, weight: deployment.weight, priority: deployment.priority,
      keys: deployment.provider.keys.counts(),
    };
  });
}

/** Registers the route inside the admin scope (its auth hook already applies). */
export function registerDeploymentRoutes(scope: FastifyInstance, source: DeploymentsSource): void {
  scope.get('/deployments', async () => ({ object: 'list', data: listDeployments(source) }));
}
