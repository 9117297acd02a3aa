/**
 * Bedrock's Converse and ConverseStream in the simulator (issue 32 item 2; the Smithy model's shapes,
 * docs/vendors/bedrock-converse.md): `POST /model/{modelId}/converse` answers a ConverseResponse JSON,
 * `POST /model/{modelId}/converse-stream` an AWS event stream (application/vnd.amazon.eventstream:
 * messageStart, contentBlockStart / Delta / Stop, messageStop, metadata with the usage), each frame with
 * its CRCs (src/translate/eventstream.ts encodes them). Every request's SigV4 signature is checked first
 * (bedrock-auth.ts): a wrong one is Bedrock's 403 with `x-amzn-ErrorType`. The answer itself is the
 * messages simulator's (messages.ts) for the same conversation: text, a tool call, usage; a `cachePoint`
 * makes the first request for a system text a cache write and later ones reads, half of the prompt each.
 * Faults scope by the model id; error_after_chunks sends an exception frame, malformed_after_chunks a
 * frame whose CRC is wrong.
 */
import type http from 'node:http';
import type { RawRequest } from './anthropic-files.js';
import type { SimMatch } from './azure-content-safety.js';
import { verifySigV4 } from './bedrock-auth.js';
import type { Exchange, SimRoute } from './exchange.js';
import { answerMessages, type MessagesAnswer, type SimMessagesRequest } from './messages.js';
import { sendJsonAnswer } from './native.js';
import { encodeFrame } from '../translate/eventstream.js';
import { bodyHash, isRecord, slices, type Rec } from './text.js';

const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException', 408: 'ModelTimeoutException',
  424: 'ModelErrorException', 429: 'ThrottlingException', 500: 'InternalServerException', 503: 'ServiceUnavailableException',
};

const requestId = (raw: string): string => {
  const h = bodyHash(raw);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

/** Bedrock's error answer: `{message}` with its type in `x-amzn-ErrorType` (restJson1). */
function errorAnswer(type: string, message: string, raw: string): { body: unknown; headers: http.OutgoingHttpHeaders } {
  return { body: { message }, headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': requestId(raw) } };
}

function faultResponse(status: number, raw: string): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
  const answer = errorAnswer(type, `Simulated error (status ${status}).`, raw);
  return status === 429 ? { ...answer, headers: { ...answer.headers, 'retry-after': '7' } } : answer;
}

/** A Converse content block as the messages simulator's block (text, tool use, tool result). */
function simBlock(block: unknown): Rec[] {
  if (!isRecord(block)) return [];
  if (typeof block.text === 'string') return [{ type: 'text', text: block.text }];
  if (isRecord(block.toolUse)) return [{ type: 'tool_use', id: block.toolUse.toolUseId, name: block.toolUse.name, input: block.toolUse.input }];
  if (isRecord(block.toolResult)) {
    const content = Array.isArray(block.toolResult.content) ? block.toolResult.content.flatMap(simBlock) : [];
    return [{ type: 'tool_result', tool_use_id: block.toolResult.toolUseId, content }];
  }
  return [];
}

/** The Converse request as the messages simulator reads one, or why it is invalid (ValidationException). */
function simRequest(body: unknown, modelId: string): { req: SimMessagesRequest; cached: boolean } | string {
  if (!isRecord(body)) return 'Malformed input request, please reformat your input and try again.';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'The model returned the following errors: messages: at least one message is required';
  const messages = body.messages.map((m: unknown) => (isRecord(m) ? { role: m.role, content: Array.isArray(m.content) ? m.content.flatMap(simBlock) : [] } : {}));
  if (messages.some((m) => m.role !== 'user' && m.role !== 'assistant')) return 'A conversation must alternate between user and assistant roles.';
  const system = Array.isArray(body.system) ? body.system.flatMap(simBlock) : [];
  const config = isRecord(body.toolConfig) ? body.toolConfig : null;
  const tools = (Array.isArray(config?.tools) ? config.tools : []).flatMap((t: unknown) => (isRecord(t) && isRecord(t.toolSpec)
    ? [{ name: t.toolSpec.name, input_schema: isRecord(t.toolSpec.inputSchema) ? t.toolSpec.inputSchema.json : {} }] : []));
  const choice = isRecord(config?.toolChoice) ? config.toolChoice : null;
  const toolChoice = choice?.any ? { type: 'any' } : isRecord(choice?.tool) ? { type: 'tool', name: choice.tool.name } : { type: 'auto' };
  const inference = isRecord(body.inferenceConfig) ? body.inferenceConfig : {};
  const cached = [body.system, ...body.messages.map((m: unknown) => (isRecord(m) ? m.content : null)), config?.tools]
    .some((list) => Array.isArray(list) && list.some((b) => isRecord(b) && isRecord(b.cachePoint)));
  const req: SimMessagesRequest = {
    model: modelId, max_tokens: typeof inference.maxTokens === 'number' ? inference.maxTokens : 4096, messages: messages as Rec[],
    ...(system.length ? { system } : {}), ...(tools.length ? { tools, tool_choice: toolChoice } : {}),
    ...(Array.isArray(inference.stopSequences) ? { stop_sequences: inference.stopSequences as string[] } : {}),
  };
  return { req, cached };
}

/** Converse's TokenUsage for an answer, with the cache split (writes, reads) of its cached prefix. */
function tokenUsage(a: MessagesAnswer, split: { write: number; read: number }): Rec {
  const input = a.total_input_tokens - split.write - split.read;
  const usage: Rec = { inputTokens: input, outputTokens: a.output_tokens, totalTokens: a.total_input_tokens + a.output_tokens };
  if (split.write > 0 || split.read > 0) Object.assign(usage, { cacheReadInputTokens: split.read, cacheWriteInputTokens: split.write });
  return usage;
}

/** The answer's blocks as Converse content. */
function converseContent(a: MessagesAnswer): Rec[] {
  return a.content.flatMap((b): Rec[] => (b.type === 'text' ? [{ text: b.text }] : b.type === 'tool_use' ? [{ toolUse: { toolUseId: b.id, name: b.name, input: b.input } }] : []));
}

const event = (type: string, payload: Rec): Buffer => encodeFrame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload)));

/** The event-stream frames of an answer (usage null: the metadata event carries none, fault omit_usage). */
function streamFrames(a: MessagesAnswer, usage: Rec | null): Buffer[] {
  const frames = [event('messageStart', { role: 'assistant' })];
  converseContent(a).forEach((block, index) => {
    if (typeof block.text === 'string') {
      for (const word of a.words) frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text: word } }));
    } else {
      const use = block.toolUse as Rec;
      frames.push(event('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: use.toolUseId, name: use.name } } }));
      for (const piece of slices(JSON.stringify(use.input ?? {}), 2)) frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: piece } } }));
    }
    frames.push(event('contentBlockStop', { contentBlockIndex: index }));
  });
  frames.push(event('messageStop', { stopReason: a.stop_reason }));
  frames.push(event('metadata', { ...(usage ? { usage } : {}), metrics: { latencyMs: 1 } }));
  return frames;
}

/** The exception frame ConverseStream ends with on a failure mid-stream (fault error_after_chunks). */
const EXCEPTION_FRAME = encodeFrame({ ':exception-type': 'internalServerException', ':content-type': 'application/json', ':message-type': 'exception' }, Buffer.from(JSON.stringify({ message: 'Simulated internal error.' })));

/** A frame whose message CRC is wrong (fault malformed_after_chunks): a reader must refuse it. */
function corruptFrame(): Buffer {
  const frame = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' corrupt' } });
  frame.writeUInt32BE((frame.readUInt32BE(frame.length - 4) ^ 0xffffffff) >>> 0, frame.length - 4);
  return frame;
}

/** Remembers which system texts were cached (bounded). */
class CacheMemory {
  private readonly keys = new Set<string>();
  split(a: MessagesAnswer, cached: boolean, key: string): { write: number; read: number } {
    if (!cached) return { write: 0, read: 0 };
    const half = Math.floor(a.total_input_tokens / 2);
    if (this.keys.has(key)) return { write: 0, read: half };
    if (this.keys.size >= 1000) this.keys.delete(this.keys.values().next().value!);
    this.keys.add(key);
    return { write: half, read: 0 };
  }
  clear(): void { this.keys.clear(); }
}

const PATH = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

/** The Bedrock routes of one simulator: `match` for server.ts's matchers, `reset` forgets the cache. */
export function createBedrockRoutes(): { match: (method: string, url: URL, raw: RawRequest) => SimMatch | undefined; reset(): void } {
  const cache = new CacheMemory();
  const route = (modelId: string, stream: boolean, raw: RawRequest, method: string, rawUrl: string): SimRoute => ({
    faultResponse: (status, body) => faultResponse(status, body),
    async handle(x: Exchange) {
      const refused = verifySigV4(method, rawUrl, x.headers, raw.bytes, 'bedrock');
      const fail = (status: number, type: string, message: string) => { const e = errorAnswer(type, message, x.raw); x.sendJson(status, e.body, e.headers); };
      if (refused) return fail(403, refused.type, refused.message);
      const parsed = simRequest(x.parsed ? x.body : null, modelId);
      if (typeof parsed === 'string') return fail(400, 'ValidationException', parsed);
      const answer = answerMessages(parsed.req, x.raw, x.fault.answer_words);
      if (!answer.ok) return fail(400, 'ValidationException', answer.message);
      const split = cache.split(answer.value, parsed.cached, JSON.stringify(parsed.req.system ?? ''));
      const usage = x.fault.omit_usage === true ? null : tokenUsage(answer.value, split);
      const headers = { 'x-amzn-requestid': requestId(x.raw) };
      if (!stream) {
        const body = { output: { message: { role: 'assistant', content: converseContent(answer.value) } }, stopReason: answer.value.stop_reason, ...(usage ? { usage } : {}), metrics: { latencyMs: 1 } };
        return sendJsonAnswer(x, body, headers); // the chunk faults cut or break the JSON body
      }
      await x.stream(streamFrames(answer.value, usage), { error: () => EXCEPTION_FRAME, malformed: corruptFrame() }, { ...headers, 'content-type': 'application/vnd.amazon.eventstream' });
    },
  });
  return {
    match(method, url, raw) {
      const m = PATH.exec(url.pathname);
      if (method !== 'POST' || !m) return undefined;
      const modelId = decodeURIComponent(m[1]!);
      return { route: route(modelId, m[2] === 'converse-stream', raw, method, url.pathname + url.search), faultKey: modelId };
    },
    reset: () => cache.clear(),
  };
}
