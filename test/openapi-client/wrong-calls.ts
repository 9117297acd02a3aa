/**
 * Calls the document does not allow: each line ending in the marker comment must be refused by tsc
 * once `./schema.js` is generated (test/e2e/openapi-client.test.ts), and no other line. Never run.
 * (An unknown body field is no type error here: openapi-fetch's body type admits it; the gateway
 * answers it with a 400, as test/admin/openapi-contract.test.ts checks.)
 */
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

/** Never called: it only has to compile, or not. */
export async function wrongCalls(baseUrl: string): Promise<void> {
  const client = createClient<paths>({ baseUrl });
  await client.GET('/admin/accounts/{id}', { params: { path: { id: 'acct_1' } } });
  await client.GET('/admin/no-such-route'); // type error
  await client.POST('/admin/accounts', { body: { balance_usd: 10 } }); // type error
  await client.POST('/admin/accounts/{id}/topups', { params: { path: { id: 'acct_1' } }, body: {} }); // type error
  await client.DELETE('/admin/accounts/{id}', { params: { path: { id: 'acct_1' } } }); // type error
  await client.POST('/v1/audio/speech', { body: { model: 'tts-1', input: 'no voice' } }); // type error
  const { data } = await client.GET('/admin/accounts/{id}', { params: { path: { id: 'acct_1' } } });
  const balance: number | undefined = data?.balance_usd; // type error
  void balance;
}
