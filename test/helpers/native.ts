/** Shared by the native routes' end-to-end tests: a JSON POST, and the check that nothing was reserved or charged. */
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';

/** A JSON answer: status, headers and the parsed body. */
export interface JsonAnswer { status: number; headers: Headers; json: any }

/** POSTs `body` as JSON to `path` with the key; `check` sees every parsed body (e.g. a response schema). */
export async function postJson(t: TestGateway, path: string, key: string, body: unknown, check?: (answer: JsonAnswer) => void): Promise<JsonAnswer> {
  const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = { status: res.status, headers: res.headers, json: await res.json() };
  check?.(answer);
  return answer;
}

/** The account still has `balanceNano`, holds nothing and has no usage row. */
export async function expectUntouched(t: TestGateway, account: { id: string }, balanceNano: bigint): Promise<void> {
  expect(await t.settled(account.id)).toMatchObject({ balanceNano, heldNano: 0n, openHolds: 0 });
  expect((await t.usage(account.id)).data).toEqual([]);
}

/**
 * A failed binary answer: an error status, or, when it was streamed through (issue 9 point 3), a 200
 * whose body breaks off; never a complete-looking one.
 */
export async function expectBrokenAnswer(res: Response, label?: string): Promise<void> {
  if (res.status === 200) {
    await expect(res.arrayBuffer(), label).rejects.toThrow();
    return;
  }
  expect(res.status, label).toBeGreaterThanOrEqual(500);
  await res.arrayBuffer().catch(() => null);
}

/** The ids `GET /v1/models?service_type=<type>` lists (any key), and the public catalogue's entry for `offering`. */
export async function listedAndCatalogued(t: TestGateway, serviceType: string, offering: string): Promise<{ ids: string[]; entry: Record<string, any> | undefined }> {
  const account = await t.account('0');
  const res = await fetch(`${t.url}/v1/models?service_type=${serviceType}`, { headers: { authorization: `Bearer ${account.key}` } });
  expect(res.status).toBe(200);
  const ids = ((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
  const catalog = (await (await fetch(`${t.url}/api/public/catalog`)).json()) as { data: Array<Record<string, any>> };
  return { ids, entry: catalog.data.find((o) => o.id === offering) };
}
