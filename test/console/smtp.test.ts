/**
 * The console's mail over SMTP (issue 13 item 1: "SMTP via a well-kept library when SMTP_URL is set"):
 * with SMTP_URL pointing at a loopback SMTP server, the sign-up's verification mail goes there (from
 * SMTP_FROM, with the link that creates the account) and the development outbox stays empty.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ConsoleClient, csrfOf } from '../helpers/console.js';

interface Received { from: string; to: string[]; data: string }

describe('console mail over SMTP', () => {
  const received: Received[] = [];
  let smtp: SMTPServer;
  let t: TestGateway;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString('utf8') });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await startTestGateway({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_FROM: 'Gateway <gateway@example.com>' } });
  }, 60_000);
  afterAll(async () => {
    await t?.dispose();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('sends the verification link by SMTP, and the link creates the account', async () => {
    const client = new ConsoleClient(t.url);
    const answer = await client.post('/console/signup', { email: 'smtp@example.com', password: 'a long passphrase' }, csrfOf((await client.get('/console')).text));
    expect(answer.status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]!.from).toBe('gateway@example.com');
    expect(received[0]!.to).toEqual(['smtp@example.com']);
    expect(received[0]!.data).toContain('Subject: Verify your email for AI Gateway');
    // The text part may be quoted-printable: soft line breaks removed, =XX decoded.
    const text = received[0]!.data.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const link = /(http:\/\/\S+\/console\/verify\?token=[A-Za-z0-9_-]+)/.exec(text)?.[1];
    expect(link).toBeDefined();
    const verified = await client.get(new URL(link!).pathname + new URL(link!).search);
    expect(verified.status).toBe(303);
    expect(await t.gw.db.query("SELECT 1 FROM console_users WHERE email = 'smtp@example.com'")).toHaveLength(1);
    const outbox = await fetch(`${t.url}/admin/outbox`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json()) as { transport: string; data: unknown[] };
    expect(outbox).toEqual({ transport: 'smtp', data: [] });
  });

  it('answers 503 with a clear page when the SMTP server cannot be reached, and creates nothing', async () => {
    // A loopback port with nothing listening: the transport fails at connect.
    const closed = new SMTPServer({ authOptional: true, logger: false });
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = await startTestGateway({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
    try {
      const client = new ConsoleClient(down.url);
      const answer = await client.post('/console/signup', { email: 'nomail@example.com', password: 'a long passphrase' }, csrfOf((await client.get('/console')).text));
      expect(answer.status).toBe(503);
      expect(answer.text).toContain('We could not send the email right now.');
      expect(await down.gw.db.query("SELECT 1 FROM console_users WHERE email = 'nomail@example.com'")).toHaveLength(0);
    } finally {
      await down.dispose();
    }
  });
});
