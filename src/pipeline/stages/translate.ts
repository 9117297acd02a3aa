/** Stage 5, translate: builds the upstream body (and query) with the translator chosen for the model's operation. */
import type { Stage } from '../stage.js';

/** Translates proxy routes' requests. */
export const translateStage: Stage = {
  name: 'translate',
  compile: (route) => {
    if (route.manifest.handler !== 'proxy') return null;
    return (ctx) => {
      const translation = ctx.translation!;
      translation.upstreamBody = translation.translator.request(ctx.body, ctx.model!.offering, ctx.files);
      translation.upstreamQuery = translation.translator.query?.(ctx.body) ?? null;
    };
  },
};
