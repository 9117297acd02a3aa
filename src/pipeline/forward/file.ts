/**
 * A binary answer (issue 9 point 3: an MP3, a DOCX, a PDF) whose bill is known only from the whole
 * answer, read into a bounded buffer, translated to the client's file, and sent only once settled,
 * with the meter's quantity and cost headers (one whose bill the headers fix streams through instead:
 * binary-stream.ts). A larger answer than the operation allows is a 502, not billed (src/upstream/body.ts
 * reads it under its bound).
 */
import { GatewayError } from '../../errors.js';
import type { RequestContext } from '../context.js';
import { answerModelId } from '../../config/aliases.js';

/** `attachment; filename=...` with an ASCII fallback and the UTF-8 name (RFC 6266 / 5987). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  // RFC 5987 value-chars: encodeURIComponent leaves ' ( ) * ! unescaped, which the syntax does not allow.
  const encoded = encodeURIComponent(filename).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Translates the bytes and holds the answer back until the meter stage has settled it. */
export function answerWithFile(ctx: RequestContext, data: Buffer, headers: Record<string, string>): void {
  const translator = ctx.translation!.translator;
  if (!translator.file) throw new GatewayError('internal_error', 'The operation answers a file its translator cannot read.');
  const file = translator.file(data, headers, answerModelId(ctx.model!.offering, ctx.routing?.clientBody.model));
  // A file may come with the upstream's token usage (a token-billed speech model): the token meter's source.
  ctx.outcome = { delivery: 'full', reported: file.usage ?? null, deliveredText: '', answer: { upstreamBody: null, headers, clientBody: null, quantities: file.quantities ?? {} } };
  ctx.finish = async () => {
    ctx.started = true;
    ctx.reply.code(200).header('content-type', file.contentType).header('content-length', String(file.data.length));
    if (file.filename) ctx.reply.header('content-disposition', contentDisposition(file.filename));
    await ctx.reply.send(file.data);
  };
}
