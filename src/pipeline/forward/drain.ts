/** Back-pressure towards the client, shared by the streamed answers (SSE frames and binary bodies). */
import type { RequestContext } from '../context.js';

/** Resolves once the client's socket has drained, or once the client has left (whichever comes first). */
export function waitForDrain(ctx: RequestContext): Promise<void> {
  const raw = ctx.reply.raw;
  const signal = ctx.clientGone;
  return new Promise<void>((resolve) => {
    const done = (): void => { raw.off('drain', done); signal.removeEventListener('abort', done); resolve(); };
    raw.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
