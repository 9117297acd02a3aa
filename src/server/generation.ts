/**
 * One configuration generation: a compiled gateway plus its router and compiled pipelines. Hot
 * reload builds a new generation and swaps one reference; a request keeps the generation it started
 * with, so requests in flight finish on their own configuration.
 */
import FindMyWay from 'find-my-way';
import type { CompiledGateway } from '../config/types.js';
import { compilePipeline, type CompiledPipeline } from '../pipeline/index.js';
import type { Runtime } from '../pipeline/stage.js';

type HttpMethod = 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT';

/** A compiled gateway with its routes ready to match. */
export interface Generation {
  gateway: CompiledGateway;
  match(method: string, path: string): { pipeline: CompiledPipeline; params: Record<string, string> } | null;
}

/** OpenAPI-style `{name}` segments to the router's `:name`. */
export function routerPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/** Builds a generation: every route's pipeline compiled once. */
export function buildGeneration(gateway: CompiledGateway, runtime: Runtime): Generation {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1024 });
  const pipelines = new Map<string, CompiledPipeline>();
  for (const route of gateway.routes) {
    const pipeline = compilePipeline(route, runtime);
    const key = `${route.manifest.method} ${route.manifest.path}`;
    pipelines.set(key, pipeline);
    router.on(route.manifest.method as HttpMethod, routerPath(route.manifest.path), () => undefined, { key });
  }
  return {
    gateway,
    match(method, path) {
      const found = router.find(method as HttpMethod, path);
      if (!found) return null;
      const pipeline = pipelines.get((found.store as { key: string }).key)!;
      return { pipeline, params: found.params as Record<string, string> };
    },
  };
}
