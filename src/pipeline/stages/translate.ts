/** Stage 4, translate: picks the `<client>--<upstream>` translator and builds the upstream body. */
import { createTranslator } from '../../translate/registry.js';
import type { Stage } from '../stage.js';

/** Translates proxy routes' requests. */
export const translateStage: Stage = {
  name: 'translate',
  compile: (route) => {
    if (route.manifest.handler !== 'proxy') return null;
    const clientFormat = route.manifest.format;
    return (ctx) => {
      const { offering } = ctx.model!;
      const { choice, format } = ctx.upstream!;
      const translator = createTranslator(clientFormat, format, ctx.body, offering.id, { params: choice.params });
      ctx.translation = { translator, upstreamBody: translator.request(ctx.body, offering) };
    };
  },
};
