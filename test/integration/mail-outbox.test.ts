/**
 * Pins system e-mail (issue 8): without SMTP_URL messages stay in the outbox table and the real
 * `plaza outbox list` command shows them; with an SMTP server that fails, the request still
 * answers at once and delivery is retried with backoff until the server accepts (real
 * smtp-server); after the last attempt a message is `failed`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrate, openDatabase } from '../../src/db/index.ts';
import type { Clock } from '../../src/kernel/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMailer, RETRY_DELAYS_MS } from '../../src/mail/index.ts';
import { runPlaza } from '../support/cli.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

const log = createLogger({ level: 'silent' });

describe('plaza outbox list', () => {
  it('shows e-mails kept in the outbox when no SMTP server is configured', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plaza-outbox-'));
    try {
      const db = await openDatabase({ kind: 'pglite', dataDir: dir });
      await migrate(db.sql);
      const mailer = createMailer({
        prisma: db.prisma,
        clock: systemClock,
        log,
        smtpUrl: undefined,
        from: 'Plaza <p@example.com>',
      });
      expect(mailer.mode).toBe('outbox');
      await mailer.enqueue({
        to: 'someone@example.com',
        subject: 'Your Plaza sign-in link',
        text: 'Use this link: http://localhost/x',
      });
      await mailer.close();
      await db.close();
      const result = await runPlaza(['outbox', 'list', '--json'], { PLAZA_DATA_DIR: dir });
      expect(result.code, result.stderr).toBe(0);
      const rows = result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        to: 'someone@example.com',
        subject: 'Your Plaza sign-in link',
        status: 'outbox',
        text: 'Use this link: http://localhost/x',
      });
      const bad = await runPlaza(['outbox', 'list', '--limit', '0'], { PLAZA_DATA_DIR: dir });
      expect(bad.code).toBe(2);
      // A status no e-mail can have is a usage error naming the allowed ones, not an empty list.
      const bogus = await runPlaza(['outbox', 'list', '--status', 'bogus'], { PLAZA_DATA_DIR: dir });
      expect(bogus.code).toBe(2);
      expect(bogus.stderr).toMatch(/bogus/);
      expect(bogus.stderr).toMatch(/outbox, queued, sending, sent, failed/);
      expect(bogus.stdout).toBe('');
      const outboxOnly = await runPlaza(['outbox', 'list', '--status', 'outbox', '--json'], { PLAZA_DATA_DIR: dir });
      expect(outboxOnly.code, outboxOnly.stderr).toBe(0);
      expect(outboxOnly.stdout.trim().split('\n')).toHaveLength(1);
      const sentOnly = await runPlaza(['outbox', 'list', '--status', 'sent'], { PLAZA_DATA_DIR: dir });
      expect(sentOnly.stdout).toBe('(no e-mails)\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Five runs of the CLI, each opening the embedded database: 60 s was not enough at load 10.
  }, 180_000);
});

describe.each(BACKENDS)('system e-mail on %s', (backend) => {
  let smtp: SmtpSink;
  let t: TestDatabase;
  let plaza: TestPlaza;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await plaza?.close();
    await t?.dispose();
    await smtp?.close();
  });

  it('keeps sign-in links in the outbox without SMTP_URL', async () => {
    plaza = await startTestPlaza(backend, { db: t.db });
    const res = await fetch(`${plaza.url}/api/auth/email/register-link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'outbox@example.com' }),
    });
    expect(res.status).toBe(202);
    const options = (await (await fetch(`${plaza.url}/api/auth/options`)).json()) as any;
    expect(options.email_delivery).toBe('outbox');
    const row = await t.db.prisma.outboundEmail.findFirst({ where: { to: 'outbox@example.com' } });
    expect(row).toMatchObject({ status: 'outbox', attempts: 0 });
    expect(row!.text).toMatch(/\/sign-in\?token=lnk_/);
  });

  it('answers at once while the SMTP server is down, then retries with backoff until it is delivered', async () => {
    let now = Date.now();
    const clock: Clock = { now: () => now };
    const down = 'smtp://127.0.0.1:1';
    const failing = createMailer({ prisma: t.db.prisma, clock, log, smtpUrl: down, from: 'Plaza <p@example.com>' });
    const started = performance.now();
    const id = await failing.enqueue({ to: 'retry@example.com', subject: 'retry me', text: 'hello' });
    expect(performance.now() - started).toBeLessThan(1_000);
    await failing.close();
    let row = await t.db.prisma.outboundEmail.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: 'queued', attempts: 1 });
    expect(row.lastError).toBeTruthy();
    expect(row.nextAttemptAt.getTime() - now).toBe(RETRY_DELAYS_MS[0]);

    const working = createMailer({ prisma: t.db.prisma, clock, log, smtpUrl: smtp.url, from: 'Plaza <p@example.com>' });
    expect(await working.deliverDue()).toBe(0); // not due yet
    now += RETRY_DELAYS_MS[0];
    expect(await working.deliverDue()).toBe(1);
    await working.close();
    row = await t.db.prisma.outboundEmail.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
    const mail = await smtp.waitFor((m) => m.to.includes('retry@example.com'));
    expect(mail.subject).toBe('retry me');
  });

  it('gives up after the last retry', async () => {
    let now = Date.now();
    const clock: Clock = { now: () => now };
    const failing = createMailer({
      prisma: t.db.prisma,
      clock,
      log,
      smtpUrl: 'smtp://127.0.0.1:1',
      from: 'Plaza <p@example.com>',
    });
    const id = await failing.enqueue({ to: 'never@example.com', subject: 'never', text: 'x' });
    await failing.close();
    const again = createMailer({
      prisma: t.db.prisma,
      clock,
      log,
      smtpUrl: 'smtp://127.0.0.1:1',
      from: 'Plaza <p@example.com>',
    });
    for (const delay of RETRY_DELAYS_MS) {
      now += delay;
      await again.deliverDue();
    }
    await again.close();
    const row = await t.db.prisma.outboundEmail.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: 'failed', attempts: RETRY_DELAYS_MS.length + 1 });
  });
});
