/** System e-mail: an outbox table, delivered over SMTP (nodemailer) with retries when configured. */
export type { Mailer, MailerOptions, MailMessage, MailTransport } from './mailer.ts';
export { createMailer, RETRY_DELAYS_MS } from './mailer.ts';
export type { OutboxEntry } from './outbox.ts';
export { listOutbox, OUTBOX_STATUSES } from './outbox.ts';
