import type { PrismaClient } from '../db/index.ts';

/** Every status a stored e-mail can have (the mailer writes no other). */
export const OUTBOX_STATUSES = ['outbox', 'queued', 'sending', 'sent', 'failed'] as const;

/** One stored system e-mail, as `plaza outbox list` shows it. */
export interface OutboxEntry {
  id: string;
  to: string;
  subject: string;
  text: string;
  status: string;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

/** The newest stored e-mails (every status: outbox, queued, sent, failed), newest first. */
export async function listOutbox(
  prisma: PrismaClient,
  options: { limit: number; status?: string | undefined },
): Promise<OutboxEntry[]> {
  const rows = await prisma.outboundEmail.findMany({
    where: options.status === undefined ? {} : { status: options.status },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: options.limit,
  });
  return rows.map((r) => ({
    id: r.id,
    to: r.to,
    subject: r.subject,
    text: r.text,
    status: r.status,
    attempts: r.attempts,
    lastError: r.lastError,
    createdAt: r.createdAt,
    sentAt: r.sentAt,
  }));
}
