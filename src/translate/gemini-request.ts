/**
 * The request side every translator to the Gemini generateContent format shares: contents built turn
 * by turn, function declarations, the function-calling config and JSON output. Tool and output
 * schemas go as `parametersJsonSchema` / `responseJsonSchema` (JSON Schema as the client wrote it),
 * not as `parameters` / `responseSchema` (Google's OpenAPI subset, which refuses keywords such as
 * `additionalProperties` and `$ref` that chat and messages clients send): nothing to convert or lose.
 */

type Rec = Record<string, unknown>;

/** One turn of `contents`: the vendor's roles are `user` and `model`. */
export interface GeminiContent { role: 'user' | 'model'; parts: Rec[] }

/** Appends parts as a turn of `role`, merged into the previous turn when it has the same role. */
export function appendTurn(contents: GeminiContent[], role: 'user' | 'model', parts: Rec[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts: [...parts] });
}

/** A `functionCall` part (arguments as an object). */
export function functionCallPart(name: string, args: Rec): Rec {
  return { functionCall: { name, args } };
}

/**
 * A `functionResponse` part answering the call named `name`. Its `response` is an object (a protobuf
 * Struct): a client's tool output, text, goes as `{content: <text>}`, or as is when it is already an object.
 */
export function functionResponsePart(name: string, output: string | Rec): Rec {
  return { functionResponse: { name, response: typeof output === 'string' ? { content: output } : output } };
}

/** A function the model may call. */
export interface FunctionSpec { name: string; description?: string; schema?: unknown }

/** The `tools` entry declaring `functions` (a function without parameters takes none: no schema). */
export function functionTools(functions: readonly FunctionSpec[]): Rec[] {
  const declarations = functions.map((f) => {
    const out: Rec = { name: f.name };
    if (f.description !== undefined) out.description = f.description;
    if (f.schema !== undefined && f.schema !== null) out.parametersJsonSchema = f.schema;
    return out;
  });
  return [{ functionDeclarations: declarations }];
}

/** How the model may call functions: AUTO (its choice), ANY (it must; `only`: one of these), NONE. */
export function functionCallingConfig(mode: 'AUTO' | 'ANY' | 'NONE', only?: readonly string[]): Rec {
  const config: Rec = { mode };
  if (only && only.length > 0) config.allowedFunctionNames = [...only];
  return { functionCallingConfig: config };
}

/** The generationConfig members that ask for JSON: any JSON (no schema), or JSON fitting `schema`. */
export function jsonOutput(schema: unknown): Rec {
  return schema === undefined ? { responseMimeType: 'application/json' } : { responseMimeType: 'application/json', responseJsonSchema: schema };
}

/** An `inlineData` part (base64 bytes with their media type). */
export function inlinePart(mimeType: string, data: string): Rec {
  return { inlineData: { mimeType, data } };
}
