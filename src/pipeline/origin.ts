/** The origin the gateway's signed URLs are built on (files, outputs, hosted videos). */
import type { FileServices } from '../files/index.js';
import type { RequestContext } from './context.js';

/** GATEWAY_PUBLIC_URL, else the origin the client used. */
export function requestOrigin(ctx: RequestContext, files: FileServices): string {
  return files.publicUrl ?? `${ctx.req.protocol}://${ctx.req.host}`;
}
