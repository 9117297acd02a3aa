/**
 * The simulator's deterministic Gemini generateContent logic (docs/vendors/gemini.md): request
 * validation as the vendor does it (an unknown field is a 400, so a gateway that sent `model` or
 * `stream` in the body is caught), the answer (text, one function call, or the JSON a
 * responseJsonSchema / responseSchema asks for), `usageMetadata`, and the JSON and stream-chunk shapes.
 * Thinking models (a name with `pro` or `thinking`, or a request with a thinking budget) report
 * thoughts tokens; a long system instruction (over 1,024 tokens) or `cachedContent` reports half the
 * prompt as cached. No I/O; answers are memoised by body.
 */
import { countTextTokens } from '../tokenize.js';
import { isOpenObject, jsonAnswer, type JsonFormat } from './structured.js';
import { answerKey, bodyHash, fitText, isRecord, Memo, outputBudget, sampleObject, sizedReply, splitWords, type Rec } from './text.js';

/** Top-level members of a GenerateContentRequest (anything else is the vendor's 400 "Unknown name"). */
const REQUEST_KEYS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent', 'labels']);
/** Members of a Part. */
const PART_KEYS = new Set(['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'thought', 'thoughtSignature', 'executableCode', 'codeExecutionResult', 'videoMetadata']);
/** Members of a GenerationConfig. */
const CONFIG_KEYS = new Set([
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'candidateCount', 'maxOutputTokens', 'temperature', 'topP', 'topK',
  'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'responseModalities', 'mediaResolution', 'speechConfig',
]);

/** The request fields the simulator reads. */
export interface SimGeminiRequest {
  contents: Array<{ role?: string; parts: Rec[] }>;
  systemInstruction?: { parts?: Rec[] };
  tools?: Array<{ functionDeclarations?: Rec[] }>;
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
  generationConfig?: Rec;
  cachedContent?: string;
}

/** An answer computed once, shared by the JSON and the stream encodings. */
export interface SimGeminiAnswer {
  responseId: string;
  modelVersion: string;
  /** Text pieces (each word with its leading whitespace); empty for a function call. */
  words: string[];
  call: { name: string; args: Rec } | null;
  /** A thought summary part first (generationConfig.thinkingConfig.includeThoughts). */
  thought: string | null;
  finishReason: 'STOP' | 'MAX_TOKENS';
  usage: { promptTokenCount: number; candidatesTokenCount: number; thoughtsTokenCount?: number; cachedContentTokenCount?: number; totalTokenCount: number };
}

/** Either the value or the vendor's 400 message. */
export type SimGeminiResult<T> = { ok: true; value: T } | { ok: false; message: string };

const fail = (message: string): { ok: false; message: string } => ({ ok: false, message });

function checkParts(parts: unknown, at: string): string | null {
  if (!Array.isArray(parts) || parts.length === 0) return `${at}.parts must be a non-empty array.`;
  for (const [j, part] of parts.entries()) {
    if (!isRecord(part)) return `${at}.parts[${j}] must be an object.`;
    const unknown = Object.keys(part).find((k) => !PART_KEYS.has(k));
    if (unknown) return `Invalid JSON payload received. Unknown name "${unknown}" at '${at}.parts[${j}]': Cannot find field.`;
  }
  return null;
}

/** Validates a parsed body as the vendor does (the fields the simulator knows); returns the request or the 400 message. */
export function validateGeminiRequest(body: unknown): SimGeminiResult<SimGeminiRequest> {
  if (!isRecord(body)) return fail('Invalid JSON payload received. Expected an object.');
  const unknown = Object.keys(body).find((k) => !REQUEST_KEYS.has(k));
  if (unknown) return fail(`Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`);
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return fail('* GenerateContentRequest.contents: contents is not specified');
  for (const [i, content] of contents.entries()) {
    if (!isRecord(content)) return fail(`contents[${i}] must be an object.`);
    if (content.role !== undefined && content.role !== 'user' && content.role !== 'model') return fail(`Please use a valid role: user, model (contents[${i}].role).`);
    const bad = checkParts(content.parts, `contents[${i}]`);
    if (bad) return fail(bad);
  }
  if (body.systemInstruction !== undefined) {
    const bad = isRecord(body.systemInstruction) ? checkParts(body.systemInstruction.parts, 'systemInstruction') : 'systemInstruction must be an object.';
    if (bad) return fail(bad);
  }
  const config = body.generationConfig;
  if (config !== undefined) {
    if (!isRecord(config)) return fail('generationConfig must be an object.');
    const unknownConfig = Object.keys(config).find((k) => !CONFIG_KEYS.has(k));
    if (unknownConfig) return fail(`Invalid JSON payload received. Unknown name "${unknownConfig}" at 'generation_config': Cannot find field.`);
    if (config.responseSchema !== undefined && config.responseJsonSchema !== undefined) return fail('responseSchema and responseJsonSchema cannot both be set.');
    const max = config.maxOutputTokens;
    if (max !== undefined && !(typeof max === 'number' && Number.isInteger(max) && max >= 1)) return fail('generationConfig.maxOutputTokens must be a positive integer.');
    if (config.candidateCount !== undefined && config.candidateCount !== 1) return fail('Only one candidate can be specified in the simulator.');
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) return fail('tools must be an array.');
  for (const [i, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    for (const [j, fn] of (isRecord(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : []).entries()) {
      if (!isRecord(fn) || typeof fn.name !== 'string') return fail(`tools[${i}].functionDeclarations[${j}].name is required.`);
      if (fn.parameters !== undefined && fn.parametersJsonSchema !== undefined) return fail(`tools[${i}].functionDeclarations[${j}]: parameters and parametersJsonSchema cannot both be set.`);
    }
  }
  return { ok: true, value: body as unknown as SimGeminiRequest };
}

/** Text the model reads in parts: texts, and function calls and responses as JSON. */
function partsText(parts: readonly Rec[] | undefined): string {
  return (parts ?? []).map((p) => (typeof p.text === 'string' ? p.text : p.functionCall || p.functionResponse ? JSON.stringify(p.functionCall ?? p.functionResponse) : '')).join('\n');
}

/** Prompt tokens: 3 per turn plus the tokens of its text, of the system instruction and of the tools' JSON. */
export function countGeminiPromptTokens(req: SimGeminiRequest): number {
  let total = req.systemInstruction ? 3 + countTextTokens(partsText(req.systemInstruction.parts)) : 0;
  for (const content of req.contents) total += 3 + countTextTokens(partsText(content.parts));
  if (req.tools && req.tools.length > 0) total += countTextTokens(JSON.stringify(req.tools));
  return total;
}

/** The function to call, null for a text answer: the first allowed one unless calling is off or the last turn answers a call. */
function pickFunction(req: SimGeminiRequest): { name: string; schema: unknown } | null {
  const declared = (req.tools ?? []).flatMap((t) => (isRecord(t) && Array.isArray(t.functionDeclarations) ? t.functionDeclarations : []))
    .map((f) => ({ name: f.name as string, schema: f.parametersJsonSchema ?? f.parameters }));
  const calling = req.toolConfig?.functionCallingConfig;
  const last = req.contents[req.contents.length - 1]!;
  if (declared.length === 0 || calling?.mode === 'NONE' || last.parts.some((p) => p.functionResponse !== undefined)) return null;
  const allowed = calling?.allowedFunctionNames;
  return (Array.isArray(allowed) && allowed.length > 0 ? declared.find((f) => allowed.includes(f.name)) : undefined) ?? declared[0]!;
}

/** The JSON the generation config asks for (responseMimeType application/json), or null. */
export function geminiJsonFormat(config: Rec | undefined): JsonFormat | null {
  if (!config || config.responseMimeType !== 'application/json') return null;
  const schema = config.responseJsonSchema ?? config.responseSchema;
  return schema === undefined || isOpenObject(schema) ? { kind: 'object' } : { kind: 'schema', schema };
}

/** Thoughts tokens of the answer: a thinking model's (or a request's budget), at most 48; none with a budget of 0. */
function thoughtTokens(model: string, config: Rec | undefined): number {
  const thinking = isRecord(config?.thinkingConfig) ? config.thinkingConfig : {};
  const budget = typeof thinking.thinkingBudget === 'number' ? thinking.thinkingBudget : null;
  if (budget === 0) return 0;
  if (budget === null && !/pro|thinking/.test(model)) return 0;
  return Math.min(budget === null || budget < 0 ? 48 : budget, 48);
}

const memo = new Memo<SimGeminiAnswer>();

/** The deterministic answer to a validated request for `model`; `raw` seeds ids; `words` (fault answer_words) fixes the word count. */
export function answerGemini(req: SimGeminiRequest, model: string, raw: string, words?: number): SimGeminiAnswer {
  return memo.get(answerKey(`${model}\u0000${raw}`, words), () => computeAnswer(req, model, raw, words));
}

function lastUserText(req: SimGeminiRequest): string {
  for (let i = req.contents.length - 1; i >= 0; i--) {
    const content = req.contents[i]!;
    if (content.role !== 'model') return content.parts.filter((p) => typeof p.text === 'string').map((p) => p.text as string).join(' ');
  }
  return '';
}

function computeAnswer(req: SimGeminiRequest, model: string, raw: string, words: number | undefined): SimGeminiAnswer {
  const hash = bodyHash(raw);
  const prompt = countGeminiPromptTokens(req);
  const system = partsText(req.systemInstruction?.parts);
  const cached = typeof req.cachedContent === 'string' || countTextTokens(system) > 1024 ? Math.floor(prompt / 2) : 0;
  const thoughts = thoughtTokens(model, req.generationConfig);
  const includeThoughts = isRecord(req.generationConfig?.thinkingConfig) && req.generationConfig.thinkingConfig.includeThoughts === true;
  const usage = (candidates: number): SimGeminiAnswer['usage'] => ({
    promptTokenCount: prompt, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates + thoughts,
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}), ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  });
  const base = { responseId: `sim${hash.slice(0, 20)}`, modelVersion: model, thought: thoughts > 0 && includeThoughts ? 'Thinking about the request (simulated).' : null };
  const fn = pickFunction(req);
  if (fn) {
    const args = isRecord(fn.schema) ? sampleObject(fn.schema, 0) : {};
    return { ...base, words: [], call: { name: fn.name, args }, finishReason: 'STOP', usage: usage(countTextTokens(fn.name + JSON.stringify(args))) };
  }
  const budget = outputBudget(typeof req.generationConfig?.maxOutputTokens === 'number' ? req.generationConfig.maxOutputTokens : null);
  const user = lastUserText(req);
  const format = geminiJsonFormat(req.generationConfig);
  const reply = format && words === undefined ? fitText(jsonAnswer(format, user), budget) : sizedReply(user, budget, words);
  return { ...base, words: splitWords(reply.text), call: null, finishReason: reply.cut ? 'MAX_TOKENS' : 'STOP', usage: usage(reply.tokens) };
}

/** The answer's parts: the thought summary, then the text or the function call. */
function answerParts(a: SimGeminiAnswer, text: string): Rec[] {
  const parts: Rec[] = a.thought ? [{ text: a.thought, thought: true }] : [];
  if (a.call) parts.push({ functionCall: { name: a.call.name, args: a.call.args } });
  else parts.push({ text });
  return parts;
}

/** The GenerateContentResponse JSON body; `usageMetadata` left out when `omitUsage`. */
export function geminiResponseBody(a: SimGeminiAnswer, omitUsage: boolean): Rec {
  const body: Rec = { candidates: [{ content: { role: 'model', parts: answerParts(a, a.words.join('')) }, finishReason: a.finishReason, index: 0 }] };
  if (!omitUsage) body.usageMetadata = a.usage;
  body.modelVersion = a.modelVersion;
  body.responseId = a.responseId;
  return body;
}

/** Words per stream chunk (the vendor streams a few words at a time). */
const WORDS_PER_CHUNK = 4;

/**
 * The stream's chunks, each a GenerateContentResponse: the text a few words at a time (or the
 * function call whole), every chunk with the usage so far (the prompt's), the last with the finish
 * reason and the whole usage. Each framed `data: <json>\r\n\r\n` as the vendor frames alt=sse.
 */
export function geminiStreamChunks(a: SimGeminiAnswer, omitUsage: boolean): Rec[] {
  const pieces: string[] = [];
  for (let i = 0; i < a.words.length; i += WORDS_PER_CHUNK) pieces.push(a.words.slice(i, i + WORDS_PER_CHUNK).join(''));
  if (pieces.length === 0 && !a.call) pieces.push('');
  const partial = { promptTokenCount: a.usage.promptTokenCount, totalTokenCount: a.usage.promptTokenCount };
  const chunk = (parts: Rec[], last: boolean): Rec => {
    const candidate: Rec = { content: { role: 'model', parts }, index: 0 };
    if (last) candidate.finishReason = a.finishReason;
    const out: Rec = { candidates: [candidate] };
    if (!omitUsage) out.usageMetadata = last ? a.usage : partial;
    out.modelVersion = a.modelVersion;
    out.responseId = a.responseId;
    return out;
  };
  const chunks: Rec[] = a.thought ? [chunk([{ text: a.thought, thought: true }], false)] : [];
  if (a.call) chunks.push(chunk([{ functionCall: { name: a.call.name, args: a.call.args } }], true));
  else pieces.forEach((text, i) => chunks.push(chunk([{ text }], i === pieces.length - 1)));
  return chunks;
}

/** A chunk as an alt=sse event. */
export const geminiEvent = (chunk: unknown): string => `data: ${JSON.stringify(chunk)}\r\n\r\n`;
