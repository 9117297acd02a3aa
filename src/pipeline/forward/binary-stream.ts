/**
 * A binary answer streamed through (issue 9 point 3). When the route's meter knows the settled
 * quantity once the upstream's status and headers are in (`Meter.knownAtHeaders`) and the translator
 * can name the client's file from them (`Translator.filePlan`), the bill and its cost headers are
 * computed from the headers, the first bytes checked, and the body piped to the client as it comes,
 * counted under the operation's `max_bytes`. The answer's last byte and the end of its body are held
 * back until the meter stage has settled: an answer completes only once it is billed, as streams do.
 * Any other binary answer is read into a bounded buffer and sent after the settle (file.ts).
 *
 * Billing, by the rules of spec 1 ("Failed requests are not billed ... Only successfully delivered
 * usage is metered") and 4.1 (rule 1: a streamed answer is billed like a whole one; rule 2: one that
 * dies carrying only a provider error is not charged), read as the chat streams read them
 * (stream.ts; DESIGN.md "Money and metering"):
 *  - an upstream body that breaks, grows past `max_bytes`, or fails the file's checks before its end
 *    is a failed request: nothing is charged, and once bytes went out the client's connection is
 *    destroyed, so it sees a truncated body, never a complete-looking one;
 *  - a client that leaves before the first byte was written pays nothing (the meter stage's rule for
 *    every route);
 *  - a client that leaves after it pays the price fixed at the headers: the upstream accepted and
 *    priced the whole work in its 200 (the quantity does not depend on how much of the body was read),
 *    as a client that leaves mid-stream pays for what was produced;
 *  - a gateway that dies mid-body leaves its hold kept alive but never checkpointed with usage, so the
 *    sweeper gives it back: the client saw a truncated body.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors.js';
import { declaredLength } from '../../files/bytes.js';
import { meterOf } from '../../meters/index.js';
import type { FilePlan, StreamTranslator } from '../../translate/types.js';
import { bodyError, tooLarge } from '../../upstream/body.js';
import type { UpstreamResponse } from '../../upstream/client.js';
import type { ForwardOutcome, RequestContext } from '../context.js';
import { releaseHold } from '../hold.js';
import type { Runtime } from '../stage.js';
import { startCheckpoints } from './checkpoint.js';
import { waitForDrain } from './drain.js';
import { contentDisposition } from './file.js';
import { answerModelId } from '../../config/aliases.js';

const NOTHING: ForwardOutcome = { delivery: 'none', reported: null, deliveredText: '' };

/** A binary stream delivers no text: its checkpoints only keep the hold alive (nothing billed on a crash). */
const NO_TEXT: StreamTranslator = { push: () => ({ frames: [] }), usage: () => null, deliveredText: () => '', deliveredLength: () => 0 };

/** True when the request's binary answer streams through: its bill and its file are known from the headers. */
export function streamsThrough(ctx: RequestContext): boolean {
  return ctx.translation!.translator.filePlan !== undefined && meterOf(ctx)?.knownAtHeaders === true;
}

/** The last `size` bytes seen of a body (for a file's tail check), without keeping the rest. */
class Tail {
  private bytes: Buffer = Buffer.alloc(0);
  constructor(private readonly size: number) {}
  push(chunk: Buffer): void {
    if (this.size === 0) return;
    this.bytes = chunk.length >= this.size ? chunk.subarray(chunk.length - this.size) : Buffer.concat([this.bytes, chunk]).subarray(-this.size);
  }
  get value(): Buffer { return this.bytes; }
}

/**
 * The client side: writes the head at the first write (so a failure before it is still a plain HTTP
 * error), always keeping the last byte received unwritten, with back-pressure.
 */
class ClientSink {
  /** The answer's last byte(s) received so far: written only by `end`, after the settle. */
  private held: Buffer = Buffer.alloc(0);
  constructor(private readonly ctx: RequestContext, private readonly head: Record<string, string>) {}

  private start(): void {
    const { ctx } = this;
    ctx.reply.hijack();
    const headers: OutgoingHttpHeaders = { ...this.head };
    for (const [name, value] of Object.entries(ctx.reply.getHeaders())) if (value !== undefined && !(name in headers)) headers[name] = value;
    ctx.reply.raw.writeHead(200, headers);
    ctx.started = true;
    // Past the head, any later failure (the settle included) must cut the connection: an error
    // body appended to the file would make it look complete.
    ctx.onFailure.push(async (error) => {
      if (!ctx.reply.raw.writableFinished) ctx.reply.raw.destroy();
      return error;
    });
  }

  /** Writes what was held and all of `data` but its last byte, which is held instead. */
  async write(data: Buffer): Promise<void> {
    if (data.length === 0) return;
    const out = [this.held, data.subarray(0, data.length - 1)];
    this.held = data.subarray(data.length - 1);
    if (!this.ctx.started) this.start();
    const raw = this.ctx.reply.raw;
    if (raw.destroyed) return;
    raw.cork();
    let ok = true;
    for (const part of out) if (part.length > 0) ok = raw.write(part) && ok;
    raw.uncork();
    if (!ok) await waitForDrain(this.ctx);
  }

  /** Holds `data` back whole (an answer too short to write before its end). */
  hold(data: Buffer): void {
    this.held = Buffer.concat([this.held, data]);
  }

  /** The last write: the held bytes and the end of the body (the head too, if nothing was written yet). */
  end(): void {
    if (!this.ctx.started) this.start();
    const raw = this.ctx.reply.raw;
    if (!raw.destroyed) raw.end(this.held);
  }

  /** Cuts the client's connection once bytes went out, so a broken answer never looks complete. */
  abort(): void {
    if (this.ctx.started && !this.ctx.reply.raw.destroyed) this.ctx.reply.raw.destroy();
  }
}

/** The response head: content type and name, length when the upstream declared one, and the bill's headers. */
function headOf(plan: FilePlan, billHeaders: Record<string, string>, length: number | undefined): Record<string, string> {
  const head: Record<string, string> = { ...billHeaders, 'content-type': plan.contentType };
  if (plan.filename) head['content-disposition'] = contentDisposition(plan.filename);
  if (length !== undefined) head['content-length'] = String(length);
  return head;
}

type BodyEnd = { kind: 'done' } | { kind: 'client_gone' } | { kind: 'error'; error: GatewayError };

/** Pipes the body to `sink`: the head check before the first write, the bound on every chunk, the tail check at the end. */
async function pipeBody(ctx: RequestContext, body: UpstreamResponse['body'], plan: FilePlan, sink: ClientSink, maxBytes: number): Promise<BodyEnd> {
  const tail = new Tail(plan.tailBytes);
  let size = 0;
  let head: Buffer[] | null = [];
  let headSize = 0;
  try {
    for await (const received of body) {
      let chunk = received as Buffer;
      size += chunk.length;
      if (size > maxBytes) return { kind: 'error', error: tooLarge(maxBytes) };
      tail.push(chunk);
      if (head) {
        head.push(chunk);
        headSize += chunk.length;
        if (headSize < plan.headBytes) continue;
        chunk = Buffer.concat(head, headSize);
        head = null;
        plan.checkHead(chunk.subarray(0, plan.headBytes));
      }
      await sink.write(chunk);
      if (ctx.clientGone.aborted) return { kind: 'client_gone' };
    }
    if (head) {
      const whole = Buffer.concat(head, headSize);
      plan.checkHead(whole);
      sink.hold(whole);
    }
    if (plan.tailBytes > 0) plan.checkTail?.(tail.value);
    return { kind: 'done' };
  } catch (error) {
    if (ctx.clientGone.aborted) return { kind: 'client_gone' };
    return { kind: 'error', error: bodyError(error) };
  }
}

/** Streams a binary answer whose bill is known from its headers (see the module comment for what is billed when). */
export async function streamBinary(ctx: RequestContext, runtime: Runtime, response: UpstreamResponse, maxBytes: number): Promise<void> {
  ctx.outcome = NOTHING;
  const plan = ctx.translation!.translator.filePlan!(response.headers, answerModelId(ctx.model!.offering, ctx.routing?.clientBody.model));
  const full: ForwardOutcome = { delivery: 'full', reported: null, deliveredText: '', answer: { upstreamBody: null, headers: response.headers, clientBody: null, quantities: plan.quantities ?? {} } };
  // The bill from the headers alone (a quantity missing there is a 502 now, before any byte).
  const bill = meterOf(ctx)!.bill(ctx, full, ctx.hold?.inputEstimate ?? 0);
  const length = declaredLength(response.headers['content-length']);
  if (length !== undefined && length > maxBytes) {
    response.body.destroy();
    throw tooLarge(maxBytes);
  }
  const sink = new ClientSink(ctx, headOf(plan, bill?.headers ?? {}, length));
  const stopCheckpoints = ctx.hold ? startCheckpoints(ctx, runtime, NO_TEXT) : null;
  let end: BodyEnd;
  try {
    end = await pipeBody(ctx, response.body, plan, sink, maxBytes);
  } finally {
    stopCheckpoints?.();
    if (!response.body.destroyed) response.body.destroy();
  }
  if (end.kind === 'error') {
    runtime.metrics?.upstreamError(ctx.model!.provider.id, end.error.code);
    ctx.outcome = NOTHING;
    // Given back before the client sees its answer cut: a client that sees the failure sees nothing held.
    await releaseHold(ctx, runtime);
    sink.abort();
    throw end.error;
  }
  // Once the first byte is out, a client that leaves pays the price fixed at the headers.
  if (end.kind === 'client_gone') {
    ctx.outcome = ctx.started ? full : NOTHING;
    return;
  }
  ctx.outcome = full;
  ctx.finish = () => sink.end();
}
