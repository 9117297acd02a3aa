import { afterAll, beforeAll, expect, it } from 'vitest';
import { digestKey, generateKey } from '../../src/ledger/keys.js';
import { Ledger, LedgerError } from '../../src/ledger/ledger.js';
import type { Db } from '../../src/store/db.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

/** Every value of every user table, as text, for "the key is not stored" checks. */
async function dumpAllTables(db: Db): Promise<string> {
  const tables = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
  );
  expect(tables.map((t) => t.table_name)).toContain('api_keys');
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const rows = await db.query<{ r: string }>(`SELECT t::text AS r FROM "${table_name}" t`);
    parts.push(...rows.map((r) => r.r));
  }
  return parts.join('\n');
}

it('generateKey is gw- + base64url of 32 bytes; digestKey is hex SHA-256 of the whole key', () => {
  const key = generateKey();
  expect(key).toMatch(/^gw-[A-Za-z0-9_-]{43}$/);
  expect(Buffer.from(key.slice(3), 'base64url')).toHaveLength(32);
  expect(generateKey()).not.toBe(key);
  expect(digestKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

describeStore(`keys (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  beforeAll(async () => {
    t = await openTestDb();
    ledger = new Ledger(t.db);
  });
  afterAll(() => t?.dispose());

  it('stores only the digest: the plaintext key appears in no table', async () => {
    const { id: accountId } = await ledger.createAccount({ balanceNano: 10n });
    const { id, key } = await ledger.createKey(accountId);
    expect(id).toMatch(/^key_/);
    expect(accountId).toMatch(/^acct_/);
    const dump = await dumpAllTables(t.db);
    expect(dump).toContain(digestKey(key));
    expect(dump).not.toContain(key);
    expect(dump).not.toContain(key.slice(3));
    expect(await ledger.authenticate(key)).toMatchObject({ accountId, keyId: id });
  });

  it('rejects unknown, malformed and empty keys', async () => {
    expect(await ledger.authenticate(generateKey())).toBeNull();
    expect(await ledger.authenticate('')).toBeNull();
    expect(await ledger.authenticate('sk-not-ours')).toBeNull();
  });

  it('rotate issues a new key and revokes the old one atomically', async () => {
    const { id: accountId } = await ledger.createAccount({});
    const first = await ledger.createKey(accountId);
    const second = await ledger.rotateKey(first.id);
    expect(second.id).not.toBe(first.id);
    expect(second.key).not.toBe(first.key);
    expect(await ledger.authenticate(first.key)).toBeNull();
    expect(await ledger.authenticate(second.key)).toMatchObject({ accountId, keyId: second.id });
    await expect(ledger.rotateKey(first.id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('concurrent rotations of one key: exactly one wins', async () => {
    const { id: accountId } = await ledger.createAccount({});
    const k = await ledger.createKey(accountId);
    const results = await Promise.allSettled([1, 2, 3, 4].map(() => ledger.rotateKey(k.id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const live = await t.db.query('SELECT id FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL', [accountId]);
    expect(live).toHaveLength(1);
  });

  it('delete revokes; unknown ids are not_found; keys need an existing account', async () => {
    const { id: accountId } = await ledger.createAccount({});
    const a = await ledger.createKey(accountId);
    const b = await ledger.createKey(accountId);
    await ledger.deleteKey(a.id);
    await ledger.deleteKey(a.id); // already revoked: still fine
    expect(await ledger.authenticate(a.key)).toBeNull();
    expect(await ledger.authenticate(b.key)).toMatchObject({ accountId, keyId: b.id });
    await expect(ledger.deleteKey('key_nope')).rejects.toBeInstanceOf(LedgerError);
    await expect(ledger.deleteKey('key_nope')).rejects.toMatchObject({ code: 'not_found' });
    await expect(ledger.createKey('acct_nope')).rejects.toMatchObject({ code: 'not_found' });
  });
});
