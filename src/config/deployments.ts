/**
 * Providers, then offerings with their deployments (issue 29 items 1 and 4): every provider is
 * compiled first, then each offering's `deployments` are resolved against them, each with the view of
 * the offering it serves (its own upstream model and provider id), and the offering's `routing:` is
 * merged over the global one. The offering's own `providerId` stays its owner (the catalogue's
 * owned_by), so every check that reaches an offering through its provider behaves as before.
 */
import type { ProviderManifest } from '../generated/manifest-types.js';
import { servesOffering } from './upstream-choice.js';
import { ManifestError } from './errors.js';
import type { LoadedManifest, RawGateway } from './load.js';
import { compileOfferings, compileProvider, providerLive, type OfferingBase, type ProviderContext } from './providers.js';
import { compileRouting } from './routing.js';
import type { CompiledDeployment, CompiledOffering, CompiledProvider, CompiledRoute, RoutingPolicy } from './types.js';

/** Where an offering is declared: its provider file and its index in that file's `offerings`. */
export interface OfferingSource { source: LoadedManifest<ProviderManifest>; index: number }

/** Every provider and offering of a configuration, and where each offering is declared (for later checks). */
export interface CompiledSources {
  providers: Map<string, CompiledProvider>;
  offerings: Map<string, CompiledOffering>;
  sources: Map<string, OfferingSource>;
}

/** Compiles every provider, then every offering against them (issue 29 item 4). */
export function compileSources(raw: RawGateway, ctx: ProviderContext, routing: RoutingPolicy): CompiledSources {
  const providers = new Map<string, CompiledProvider>();
  const bases: Array<{ at: OfferingSource; base: OfferingBase }> = [];
  const sources = new Map<string, OfferingSource>();
  for (const source of raw.providers) {
    const { file, manifest } = source;
    if (providers.has(manifest.id)) throw new ManifestError(file, '/id', `provider id "${manifest.id}" is declared twice`, source.lineOf('/id'));
    // A self-hosted source without its base URL is not there at all (issue 32 item 1).
    if (!providerLive(manifest, ctx.env)) continue;
    providers.set(manifest.id, compileProvider(file, manifest, ctx, source.lineOf));
    compileOfferings(file, manifest).forEach((base, index) => {
      if (sources.has(base.id)) throw new ManifestError(file, '/offerings', `model id "${base.id}" is declared by two offerings`, source.lineOf(`/offerings/${index}/id`));
      sources.set(base.id, { source, index });
      bases.push({ at: { source, index }, base });
    });
  }
  const offerings = new Map(bases.map(({ at, base }) => [base.id, linkOffering(at, base, providers, routing)] as const));
  return { providers, offerings, sources };
}

/** The offering completed: its routing policy and its deployments. */
function linkOffering(at: OfferingSource, base: OfferingBase, providers: ReadonlyMap<string, CompiledProvider>, global: RoutingPolicy): CompiledOffering {
  const declared = at.source.manifest.offerings[at.index]!;
  const routing = compileRouting(declared.routing, global, { file: at.source.file, pointer: `/offerings/${at.index}/routing`, lineOf: at.source.lineOf });
  const deployments: CompiledDeployment[] = [];
  // The views spread the offering, so they share this (then filled) list.
  const offering: CompiledOffering = Object.assign(base, { routing, deployments });
  deployments.push(...deploymentsOf(at, offering, providers));
  return offering;
}

/** The manifest's `deployments`, or the one default: the owning provider with the offering itself (issue 29 item 1). */
function deploymentsOf(at: OfferingSource, offering: CompiledOffering, providers: ReadonlyMap<string, CompiledProvider>): CompiledDeployment[] {
  const listed = at.source.manifest.offerings[at.index]!.deployments;
  if (!listed) return [{ id: `${offering.providerId}/${offering.upstreamModel}`, provider: providers.get(offering.providerId)!, offering, weight: 1, priority: 0 }];
  const { file, lineOf } = at.source;
  const seen = new Map<string, number>();
  return listed.map((d, j) => {
    const here = `/offerings/${at.index}/deployments/${j}`;
    const provider = providers.get(d.provider);
    if (!provider) throw new ManifestError(file, `${here}/provider`, `unknown provider "${d.provider}" (the providers: ${[...providers.keys()].join(', ')})`, lineOf(`${here}/provider`));
    const upstreamModel = d.upstream_model ?? offering.upstreamModel;
    const id = d.id ?? `${provider.id}/${upstreamModel}`;
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      const at2 = d.id === undefined ? here : `${here}/id`;
      throw new ManifestError(file, at2, `deployment id "${id}" is already used by deployment ${earlier} of this offering${d.id === undefined ? ' (the default id is <provider>/<upstream_model>: name one with `id`)' : ''}`, lineOf(at2));
    }
    seen.set(id, j);
    return { id, provider, offering: { ...offering, upstreamModel, providerId: provider.id }, weight: d.weight ?? 1, priority: d.priority ?? 0 };
  });
}

/**
 * The deployments of an offering that serve each route it is reachable on (through its own provider,
 * as the route stage and the catalogue see it; issue 29 item 5). A route some of them cannot serve
 * (a vendor without the operation: count_tokens on Bedrock) uses the others (issue 32 item 4),
 * recorded in `routeDeployments`. A deployment serving none of the routes, or a route served by none
 * of the deployments, is an error.
 */
export function checkDeploymentRoutes(routes: readonly CompiledRoute[], offerings: ReadonlyMap<string, CompiledOffering>, providers: ReadonlyMap<string, CompiledProvider>, sources: ReadonlyMap<string, OfferingSource>): void {
  for (const offering of offerings.values()) {
    const owner = providers.get(offering.providerId)!;
    const reachable = routes.filter((r) => r.serviceTypes.has(offering.serviceType) && servesOffering(r, offering, owner));
    // A deployment serving none of them is a mistake (a rerank vendor under a chat model).
    offering.deployments.forEach((d, j) => {
      if (reachable.length === 0 || reachable.some((r) => servesOffering(r, d.offering, d.provider))) return;
      const route = reachable[0]!;
      const { source, index } = sources.get(offering.id)!;
      const at = `/offerings/${index}/deployments/${j}/provider`;
      const calls = [...new Set(route.upstreams.map((u) => u.operation))].join(', ');
      throw new ManifestError(source.file, at, `provider ${d.provider.id} has no operation that serves ${route.manifest.path} for this offering (${route.file} calls: ${calls})`, source.lineOf(at));
    });
    const partial = new Map<CompiledRoute, readonly CompiledDeployment[]>();
    for (const route of reachable) {
      const serving = offering.deployments.filter((d) => servesOffering(route, d.offering, d.provider));
      if (serving.length === offering.deployments.length) continue;
      if (serving.length === 0) {
        const { source, index } = sources.get(offering.id)!;
        const at = `/offerings/${index}/deployments`;
        throw new ManifestError(source.file, at, `no deployment of this offering serves ${route.manifest.path}, which its own provider serves`, source.lineOf(at));
      }
      partial.set(route, serving);
    }
    if (partial.size > 0) (offering as { routeDeployments?: ReadonlyMap<CompiledRoute, readonly CompiledDeployment[]> }).routeDeployments = partial;
  }
}
