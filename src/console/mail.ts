/**
 * Outgoing mail of the console (issue 13: verification links), through a pluggable transport: SMTP
 * (nodemailer) when `SMTP_URL` is set, otherwise the development outbox, which writes each message to
 * the log and keeps the latest ones for `GET /admin/outbox`. The message text is the one place a
 * verification link appears; it is never written anywhere else.
 */

/** One message. */
export interface MailMessage { to: string; subject: string; text: string }

/** A message the outbox kept, with when it was sent. */
export interface OutboxEntry extends MailMessage { id: number; sentAt: string }

/** Sends mail. */
export interface MailTransport {
  /** What this transport is, for the README's and the operator page's sake: 'smtp' or 'outbox'. */
  readonly kind: 'smtp' | 'outbox';
  send(message: MailMessage): Promise<void>;
  /** The messages kept (the outbox only; newest last). */
  outbox(): readonly OutboxEntry[];
}

/** How many messages the development outbox keeps. */
const OUTBOX_SIZE = 200;

/** The development outbox: every message to the log and to memory (the latest 200). */
export function devOutbox(log: (message: string) => void): MailTransport {
  const kept: OutboxEntry[] = [];
  let next = 1;
  return {
    kind: 'outbox',
    async send(message) {
      kept.push({ ...message, id: next++, sentAt: new Date().toISOString() });
      if (kept.length > OUTBOX_SIZE) kept.shift();
      log(`outbox: mail to ${message.to}: ${message.subject}\n${message.text}`);
    },
    outbox: () => kept,
  };
}

/** SMTP through nodemailer; `url` is an smtp:// or smtps:// URL with credentials, `from` the sender. */
export function smtpTransport(url: string, from: string): MailTransport {
  // nodemailer is loaded only by a gateway that sends mail over SMTP (issue 8, memory).
  let transport: Promise<{ sendMail(mail: object): Promise<unknown> }> | null = null;
  return {
    kind: 'smtp',
    async send(message) {
      transport ??= import('nodemailer').then((m) => m.default.createTransport(url));
      await (await transport).sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
    outbox: () => [],
  };
}

/** The transport the environment asks for: SMTP_URL (and SMTP_FROM) or the development outbox. */
export function mailTransportFromEnv(env: NodeJS.ProcessEnv, log: (message: string) => void): MailTransport {
  const url = env.SMTP_URL;
  return url ? smtpTransport(url, env.SMTP_FROM || 'AI Gateway <no-reply@localhost>') : devOutbox(log);
}
