import { type Command, Option } from 'commander';

import { type Config, ConfigError, loadConfig } from '../../config/index.ts';
// Not the mail index: it loads nodemailer, and every `plaza` command registers this one.
import { OUTBOX_STATUSES } from '../mail/index.ts';

/** `plaza outbox list`: the stored system e-mails (the outbox when no SMTP server is configured). */
export function registerOutboxCommands(program: Command, env: Record<string, string | undefined>): void {
  const outbox = program
    .command('outbox')
    .description('system e-mails kept by Plaza (sent, queued, or held when SMTP_URL is unset)');
  outbox
    .command('list')
    .description('list stored e-mails, newest first')
    .option('--limit <n>', 'how many (1-500)', '20')
    // A status no e-mail has would list nothing, as if the outbox were empty: a usage error (exit 2).
    .addOption(new Option('--status <status>', 'only this status').choices(OUTBOX_STATUSES))
    .option('--json', 'one JSON object per line, with the full text')
    .action(async (options: { limit: string; status?: string; json?: boolean }) => {
      const limit = Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
        process.stderr.write('plaza: --limit must be an integer from 1 to 500\n');
        process.exit(2);
      }
      let config: Config;
      try {
        config = loadConfig(env);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        process.stderr.write(`plaza: ${error.message}\n`);
        process.exit(2);
      }
      const { openConfiguredDatabase } = await import('../app/open-database.ts');
      const { listOutbox } = await import('../mail/index.ts');
      const db = await openConfiguredDatabase(config, 'command');
      try {
        const entries = await listOutbox(db.prisma, { limit, status: options.status });
        for (const e of entries) {
          if (options.json) {
            const row = {
              id: e.id,
              to: e.to,
              subject: e.subject,
              status: e.status,
              attempts: e.attempts,
              last_error: e.lastError,
              created_at: e.createdAt.toISOString(),
              sent_at: e.sentAt?.toISOString() ?? null,
              text: e.text,
            };
            process.stdout.write(`${JSON.stringify(row)}\n`);
          } else {
            process.stdout.write(
              `${e.createdAt.toISOString()}  ${e.status.padEnd(7)}  ${e.to}  ${e.subject}\n${e.text.replace(/^/gm, '    ')}\n\n`,
            );
          }
        }
        if (!options.json && entries.length === 0) process.stdout.write('(no e-mails)\n');
      } finally {
        await db.close();
      }
    });
}
