/** Small helpers for billing tests: raw chat calls, SSE reading, settled account state, prices. */
import type { TestGateway } from './gateway.js';

/** An account of a test gateway. */
export interface Account { id: string; key: string; t: TestGateway; }

/** POSTs a chat completion with fetch (undici), so the test controls aborts and reads raw bytes. */
export function postChat(a: Account, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${a.t.url}/v1/chat/completions`, {
    method: 'POST', signal, body: JSON.stringify(body),
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
  });
}

/** Reads a chat SSE answer: the content text, error events, and whether `[DONE]` arrived. */
export async function readSse(res: Response, opts: { stopAfterContentChunks?: number; abort?: AbortController } = {}): Promise<{ text: string; errors: Array<Record<string, unknown>>; done: boolean; chunks: number }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const out = { text: '', errors: [] as Array<Record<string, unknown>>, done: false, chunks: 0 };
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return out;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const data = buffer.slice(0, end).replace(/^data: /, '');
      buffer = buffer.slice(end + 2);
      if (data === '[DONE]') { out.done = true; continue; }
      const event = JSON.parse(data) as { error?: Record<string, unknown>; choices?: Array<{ delta?: { content?: string } }> };
      if (event.error) { out.errors.push(event.error); continue; }
      const content = event.choices?.[0]?.delta?.content;
      if (content) { out.text += content; out.chunks++; }
      if (opts.stopAfterContentChunks && out.chunks >= opts.stopAfterContentChunks) {
        opts.abort?.abort();
        await reader.cancel().catch(() => undefined);
        return out;
      }
    }
  }
}

/** The account once no hold is open (the request settled or was released), with its usage row count. */
export async function settled(a: Account): Promise<{ balanceNano: bigint; rows: number; last: { details: Record<string, unknown>; amountNano: bigint } | undefined }> {
  const ledger = a.t.gw.runtime.ledger;
  for (let i = 0; i < 100; i++) {
    const account = await a.t.settled(a.id);
    if (account.openHolds === 0) {
      const usage = await ledger.listUsage(a.id, { limit: 500 });
      return { balanceNano: account.balanceNano, rows: usage.data.length, last: usage.data[0] };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('a hold stayed open');
}

/** gpt-4o-mini price of a request without cached tokens: 0.15 in / 0.60 out USD per 1M, rounded once. */
export function chatPrice(input: number, output: number, cached = 0): bigint {
  const exact = BigInt(input - cached) * 150_000_000n + BigInt(cached) * 75_000_000n + BigInt(output) * 600_000_000n;
  return (exact + 500_000n) / 1_000_000n;
}

/** The pieces of an OpenAI SDK chat stream a test reads: the content text, and the final usage chunk's usage. */
export async function collectChatStream<U>(stream: AsyncIterable<{ choices: Array<{ delta?: { content?: string | null } }>; usage?: U | null }>): Promise<{ text: string; usage: U | undefined }> {
  let text = '';
  let usage: U | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, usage };
}
