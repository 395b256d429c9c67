import nodemailer from 'nodemailer';

import type { PrismaClient } from '../db/index.ts';
import { type Clock, newId, randomToken } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';

/** A system e-mail as Plaza composes it (plain text only). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends one message; the SMTP transport in production, anything in tests. */
export type MailTransport = (message: MailMessage & { from: string }) => Promise<void>;

/** Options of createMailer; checked at creation. */
export interface MailerOptions {
  prisma: PrismaClient;
  clock: Clock;
  log: Logger;
  /** SMTP_URL; unset keeps every message in the outbox table. */
  smtpUrl: string | undefined;
  /** MAIL_FROM. */
  from: string;
  /** Overrides the SMTP transport (tests of the retry path). */
  transport?: MailTransport;
}

/** System e-mail: written to `outbound_emails` first, delivered in the background with retries. */
export interface Mailer {
  /** `smtp` when messages leave Plaza, `outbox` when they stay in the table for an operator. */
  readonly mode: 'smtp' | 'outbox';
  /** Records the message and returns its id at once; delivery happens in the background. */
  enqueue(message: MailMessage): Promise<string>;
  /** Delivers due messages (a lease per message); returns how many were sent. */
  deliverDue(limit?: number): Promise<number>;
  /** Waits for deliveries in flight and closes the SMTP connection pool. */
  close(): Promise<void>;
}

/** Waits after the n-th failed attempt (1-based); after the last one the message is `failed`. */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 6 * 3600_000] as const;
const SENDING_LEASE_MS = 2 * 60_000;

interface DueRow {
  id: string;
  to: string;
  subject: string;
  text: string;
  attempts: number;
}

/**
 * Creates the mailer. Without an SMTP URL messages are stored with status `outbox` (shown by
 * `plaza outbox list`); with one they are `queued` and sent by `deliverDue`, which `enqueue` also
 * starts right away without awaiting it, so a request never waits for an SMTP server.
 */
export function createMailer(options: MailerOptions): Mailer {
  const { prisma, clock, log } = options;
  if (!options.from.trim()) throw new TypeError('MAIL_FROM must not be empty');
  const smtp =
    options.transport === undefined && options.smtpUrl !== undefined
      ? nodemailer.createTransport(options.smtpUrl)
      : undefined;
  const transport: MailTransport | undefined =
    options.transport ??
    (smtp
      ? async (m) => {
          await smtp.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text });
        }
      : undefined);
  const mode = transport ? 'smtp' : 'outbox';
  const owner = `mailer-${randomToken(6)}`;
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;

  async function deliverDue(limit = 20): Promise<number> {
    if (!transport) return 0;
    const now = clock.now();
    // Claiming moves next_attempt_at forward by a lease: a crashed sender's message is due again later.
    const rows = await prisma.$queryRawUnsafe<DueRow[]>(
      `UPDATE "outbound_emails" m SET "status" = 'sending', "next_attempt_at" = $1::timestamptz
         FROM (SELECT "id" FROM "outbound_emails" WHERE "status" IN ('queued', 'sending') AND "next_attempt_at" <= $2::timestamptz
                ORDER BY "next_attempt_at", "id" LIMIT $3 FOR UPDATE SKIP LOCKED) due
        WHERE m."id" = due."id" RETURNING m."id", m."to", m."subject", m."text", m."attempts"`,
      new Date(now + SENDING_LEASE_MS).toISOString(),
      new Date(now).toISOString(),
      limit,
    );
    let sent = 0;
    for (const row of rows) {
      const attempts = Number(row.attempts) + 1;
      try {
        await transport({ from: options.from, to: row.to, subject: row.subject, text: row.text });
        await prisma.outboundEmail.update({
          where: { id: row.id },
          data: { status: 'sent', attempts, sentAt: new Date(clock.now()), lastError: null },
        });
        sent++;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempts - 1];
        const message = error instanceof Error ? error.message.slice(0, 500) : String(error);
        log.warn({ email_id: row.id, attempts, owner }, `sending an e-mail failed: ${message}`);
        await prisma.outboundEmail.update({
          where: { id: row.id },
          data:
            delay === undefined
              ? { status: 'failed', attempts, lastError: message }
              : { status: 'queued', attempts, lastError: message, nextAttemptAt: new Date(clock.now() + delay) },
        });
      }
    }
    return sent;
  }

  return {
    mode,
    async enqueue(message) {
      const id = newId('mail', clock.now());
      await prisma.outboundEmail.create({
        data: {
          id,
          to: message.to,
          subject: message.subject.slice(0, 300),
          text: message.text,
          status: mode === 'smtp' ? 'queued' : 'outbox',
          nextAttemptAt: new Date(clock.now()),
        },
      });
      if (mode === 'smtp' && !closed) {
        const run = deliverDue()
          .catch((error: unknown) => log.error({ err: error }, 'e-mail delivery failed'))
          .finally(() => inFlight.delete(run));
        inFlight.add(run);
      }
      return id;
    },
    deliverDue,
    async close() {
      closed = true;
      await Promise.allSettled([...inFlight]);
      smtp?.close();
    },
  };
}
