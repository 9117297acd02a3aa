/**
 * Forwards a streaming proxy request: upstream SSE (or AWS event-stream) -> the framing's one parser -> the translator's state
 * machine -> the client's framing, with back-pressure. The SSE head is written lazily at the first
 * frame, so an upstream that fails before any content still gets a proper HTTP error, and a client
 * that leaves before the first byte pays nothing. What happened is recorded for the meter stage.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors.js';
import { AttemptError } from '../../upstream/attempt-error.js';
import type { StreamTranslator } from '../../translate/types.js';
import { bodyError } from '../../upstream/body.js';
import type { UpstreamResponse } from '../../upstream/client.js';
import type { RequestContext } from '../context.js';
import type { Runtime } from '../stage.js';
import { startCheckpoints } from './checkpoint.js';
import { waitForDrain } from './drain.js';
import { framingFor, type StreamFraming } from './framing.js';
import { sendUpstream, sentOperation } from './json.js';
import { UsageTail } from './usage-tail.js';
import { answerModelId } from '../../config/aliases.js';

function startSse(ctx: RequestContext): void {
  ctx.reply.hijack();
  // The reply's own headers (the request id, the serving provider and attempt count) go with the head.
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(ctx.reply.getHeaders())) if (value !== undefined) headers[name] = typeof value === 'number' ? String(value) : value;
  // No Connection header: Node keeps the connection alive unless the client asked to close it.
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-request-id'] = ctx.requestId;
  ctx.reply.raw.writeHead(200, headers);
  ctx.started = true;
}

/** Writes frames to the client, waiting for drain (or for the client to leave). */
export async function writeFrames(ctx: RequestContext, text: string): Promise<void> {
  if (!ctx.started) startSse(ctx);
  const raw = ctx.reply.raw;
  if (raw.destroyed || raw.write(text)) return;
  await waitForDrain(ctx);
}

type StreamEnd = { kind: 'done' } | { kind: 'error'; error: GatewayError } | { kind: 'client_gone' };

/**
 * A stream's frames until its first content (issue 29 item 3): held back, so that a stream that ends,
 * errors or stalls before it can be retried on another source, the client having seen nothing.
 * Without an attempt loop (no routing state) frames flow at once, as they always did.
 */
class Preamble {
  private held = '';
  open: boolean;
  constructor(private readonly ctx: RequestContext, private readonly translator: StreamTranslator) {
    this.open = !ctx.routing?.current;
  }

  /**
   * The frames of one event to write now: none while holding, and once the event carried the first
   * content (or the stream ended) what was held before it, then its own. A continuation (src/pipeline/
   * rescue.ts) continues a stream the client already has: its opening frames are not repeated.
   */
  pass(frames: string, ended: boolean): string {
    if (this.open) return frames;
    if (!ended && this.translator.deliveredText().length === 0) {
      this.held += frames;
      return '';
    }
    this.open = true;
    if (this.ctx.routing?.current) this.ctx.routing.current.contentStarted = true;
    const opening = this.ctx.routing?.rescue && !ended ? '' : this.held;
    this.held = '';
    return opening + frames;
  }
}

/**
 * Aborts the attempt when its upstream goes silent for `stream_idle_timeout_ms` (issue 29 item 3),
 * counted from its last piece. While the gateway waits for a slow client (back-pressure: the next
 * piece is not read) the upstream is not the one silent: the clock starts again once the write is done.
 */
function idleGuard(ctx: RequestContext): { refresh(): void; writing(on: boolean): void; clear(): void } | null {
  const attempt = ctx.routing?.current;
  if (!attempt) return null;
  let writing = false;
  const timer = setTimeout(() => {
    if (writing) { timer.refresh(); return; }
    attempt.timedOut ??= 'idle_timeout';
    attempt.signal.abort(new GatewayError('upstream_timeout', 'The upstream stream stalled.'));
  }, attempt.idleTimeoutMs);
  return {
    refresh: () => { timer.refresh(); },
    writing: (on) => { writing = on; if (!on) timer.refresh(); },
    clear: () => { clearTimeout(timer); },
  };
}

/**
 * How long, after the answer's last event, the upstream body may take to end. Reading it to its end
 * (the final chunk of the HTTP framing) lets the connection go back to the pool; destroying an
 * unfinished body aborts the request and closes the connection, so every stream would open a new one.
 */
const DRAIN_MS = 250;

async function pump(ctx: RequestContext, body: UpstreamResponse['body'], translator: StreamTranslator, usage: UsageTail, parser: StreamFraming): Promise<StreamEnd> {
  const preamble = new Preamble(ctx, translator);
  const idle = idleGuard(ctx);
  const gate = ctx.hold?.gate;
  let done = false;
  let drainGuard: NodeJS.Timeout | undefined;
  try {
    for await (const chunk of body) {
      if (done) continue;
      idle?.refresh();
      // The frames of every event in this piece of the upstream body go out in one write: one chunk of
      // the client's response and one system call, not one per event (an upstream that sends its events
      // back to back delivers a whole answer in a piece or two).
      let frames = '';
      // A corrupt piece (a frame failing its CRC) ends the stream after the events before it.
      const { events, error: broken } = parser.push(chunk);
      let failed: GatewayError | undefined;
      for (const event of events) {
        const step = translator.push(event);
        if (step.error) { failed = step.error; break; }
        ctx.streamTap?.(step.frames);
        if (step.done) done = true;
        // The final usage and what follows it wait for the bill (usage.cost; issue 31 item 12).
        const stepFrames = usage.take(step.frames);
        if (preamble.open) {
          for (const frame of stepFrames) frames += frame;
        } else {
          // Frames before the first content wait (a failure then is retried unseen, the held frames dropped).
          let own = '';
          for (const frame of stepFrames) own += frame;
          frames += preamble.pass(own, done);
        }
        if (done) {
          drainGuard = setTimeout(() => body.destroy(), DRAIN_MS);
          break;
        }
      }
      if (frames.length > 0) {
        idle?.writing(true);
        // On a credit grant: past the bound on unrecorded content, the piece waits for the flush (issue 30).
        const wait = gate?.(translator.deliveredLength());
        if (wait) await wait;
        await writeFrames(ctx, frames);
        idle?.writing(false);
      }
      if (ctx.clientGone.aborted) return { kind: 'client_gone' };
      if (failed) return { kind: 'error', error: failed };
      if (broken && !done) return { kind: 'error', error: broken };
    }
  } catch (error) {
    if (done) return finished(ctx, preamble);
    if (ctx.clientGone.aborted) return { kind: 'client_gone' };
    // Mid-stream, a lost connection is a broken answer rather than an unreachable upstream.
    if (ctx.routing?.current?.timedOut === 'idle_timeout') return { kind: 'error', error: new GatewayError('upstream_timeout', 'The upstream stream stalled before it completed.') };
    return { kind: 'error', error: bodyError(error, 'stream') };
  } finally {
    clearTimeout(drainGuard);
    idle?.clear();
  }
  if (done || translator.whole?.()) return finished(ctx, preamble);
  if (ctx.clientGone.aborted) return { kind: 'client_gone' };
  return { kind: 'error', error: new GatewayError('upstream_error', 'The upstream stream ended before it completed.') };
}

/**
 * A complete stream: what the preamble still holds is written (an answer with no content at all).
 * A stream whose body ended without its terminator but whose answer is whole (`complete`, e.g. the
 * usage chunk came and `[DONE]` did not; `whole`) is finished as a normal one (issue 29 scenario S11).
 */
async function finished(ctx: RequestContext, preamble: Preamble): Promise<StreamEnd> {
  const rest = preamble.pass('', true);
  if (rest.length > 0) await writeFrames(ctx, rest);
  return ctx.clientGone.aborted ? { kind: 'client_gone' } : { kind: 'done' };
}

/** The streaming path. */
export async function forwardStream(ctx: RequestContext, runtime: Runtime): Promise<void> {
  ctx.outcome = { delivery: 'none', reported: null, deliveredText: '' };
  let response;
  try {
    response = await sendUpstream(ctx, runtime);
  } catch (error) {
    if (ctx.clientGone.aborted) return;
    throw error;
  }
  const translator = ctx.translation!.translator.stream(answerModelId(ctx.model!.offering, ctx.routing?.clientBody.model));
  runtime.metrics?.streamOpened();
  // A stream may outlive its reservation's lifetime: keep the hold alive while it runs, and record on
  // it what was delivered so far (billed by the sweeper if this process dies mid-stream).
  const stopCheckpoints = ctx.hold ? startCheckpoints(ctx, runtime, translator) : null;
  const usage = new UsageTail(ctx.route.billable ? ctx.format.usageCost : null);
  let end: StreamEnd;
  try {
    // The framing of the operation the request was sent to (sse, or AWS event-stream).
    const framing = framingFor(ctx.model!.provider.operations[sentOperation(ctx)]!.answer);
    end = await pump(ctx, response.body, translator, usage, framing);
  } finally {
    stopCheckpoints?.();
    runtime.metrics?.streamClosed();
    if (!response.body.destroyed) response.body.destroy();
  }
  if (end.kind === 'error') runtime.metrics?.upstreamError(ctx.model!.provider.id, end.error.code);
  const reported = translator.usage();
  // Only content counts as produced: formats that report input usage up front (message_start)
  // followed by a provider error still carried "only a provider error" (spec 4.1 rule 2).
  const produced = end.kind !== 'done' && ctx.started && translator.deliveredText().length > 0;
  ctx.outcome = {
    delivery: end.kind === 'done' ? 'full' : produced ? 'partial' : 'none', reported,
    // Read by a meter only when no usage covers the answer: a translator may put it together lazily.
    get deliveredText() { return translator.deliveredText(); },
  };
  if (end.kind === 'client_gone') return;
  // Nothing reached the client: the attempt failed before content, and another may be made.
  if (end.kind === 'error' && !ctx.started) throw new AttemptError('stream_before_content', end.error);
  const tail = end.kind === 'done' ? ctx.format.streamDoneFrame ?? '' : translator.errorFrame?.(end.error) ?? ctx.format.streamErrorFrame(end.error);
  // Cut after content: the attempt loop may continue it on another source (issue 29 item 6).
  if (end.kind === 'error' && ctx.routing) ctx.routing.cut = { error: end.error, delivered: translator.deliveredText(), tail };
  if (!ctx.started) startSse(ctx);
  // Written once billed: the held final usage with what the meter charged, then the closing frame.
  ctx.finish = () => { ctx.reply.raw.end(usage.release(ctx.chargedNano) + tail); };
}
