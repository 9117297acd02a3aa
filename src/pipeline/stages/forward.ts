/** Stage 6, forward: to the upstream (JSON or stream), or to a handler the gateway answers itself. */
import type { RouteManifest } from '../../generated/manifest-types.js';
import type { StageHandler } from '../context.js';
import { forwardJson } from '../forward/json.js';
import { forwardStream } from '../forward/stream.js';
import { getModel, listModels } from '../local/models.js';
import type { Runtime, Stage } from '../stage.js';

const LOCAL: Record<Exclude<RouteManifest['handler'], 'proxy'>, StageHandler> = {
  'models-list': listModels,
  'models-get': getModel,
};

/** Forwards every route. */
export const forwardStage: Stage = {
  name: 'forward',
  compile: (route, runtime: Runtime) => {
    const handler = route.manifest.handler;
    if (handler !== 'proxy') return LOCAL[handler];
    return (ctx) => (ctx.stream ? forwardStream(ctx, runtime) : forwardJson(ctx, runtime));
  },
};
