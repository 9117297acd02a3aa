/** Raw HTTP helpers for the simulator tests of the responses and messages formats. */
import { request } from 'undici';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** One named server-sent event. */
export interface NamedEvent { event: string; data: any }

/** Calls the simulator with a JSON body (and extra headers) and reads the whole answer. */
export async function simCall(url: string, path: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const res = await request(`${url}${path}`, {
    method, headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
}

/** Parses `event: X\ndata: {...}\n\n` frames. */
export function parseNamedSse(text: string): NamedEvent[] {
  return text.split('\n\n').filter((frame) => frame.trim() !== '').map((frame) => {
    const event = /^event: (.*)$/m.exec(frame)?.[1] ?? '';
    const data = /^data: (.*)$/m.exec(frame)?.[1] ?? '';
    return { event, data: JSON.parse(data) };
  });
}

/** Posts a streaming request and keeps whatever arrived, even when the connection breaks. */
export async function streamNamed(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const parts: Buffer[] = [];
  let broken = false;
  try { for await (const part of res.body) parts.push(part as Buffer); } catch { broken = true; }
  const text = Buffer.concat(parts).toString('utf8');
  return { status: res.statusCode, headers: res.headers, broken, text, events: parseNamedSse(text) };
}

/** The Message a stream assembles to, the way the Anthropic SDK's MessageStream does it. */
export function assembleMessage(events: NamedEvent[]): any {
  let message: any;
  const json: Record<number, string> = {};
  for (const { data } of events) {
    if (data.type === 'message_start') message = structuredClone(data.message);
    else if (data.type === 'content_block_start') message.content[data.index] = structuredClone(data.content_block);
    else if (data.type === 'content_block_delta' && data.delta.type === 'text_delta') message.content[data.index].text += data.delta.text;
    else if (data.type === 'content_block_delta' && data.delta.type === 'input_json_delta') json[data.index] = (json[data.index] ?? '') + data.delta.partial_json;
    else if (data.type === 'content_block_stop' && json[data.index] !== undefined) message.content[data.index].input = JSON.parse(json[data.index]!);
    else if (data.type === 'message_delta') {
      Object.assign(message, { stop_reason: data.delta.stop_reason, stop_sequence: data.delta.stop_sequence });
      if (data.usage) {
        for (const [k, v] of Object.entries(data.usage)) if (v !== null || k === 'server_tool_use') message.usage[k] = v;
      }
    }
  }
  return message;
}

/** The Response without the fields that depend on the clock or on the exact body (ids are seeded by it, `stream` included). */
export const comparableResponse = (r: any) => ({
  ...r, id: '', created_at: 0, completed_at: r.completed_at === null ? null : 0,
  output: r.output.map((o: any) => ({ ...o, id: '', ...(o.call_id ? { call_id: '' } : {}) })),
});
