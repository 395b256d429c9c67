/**
 * Signing in on the Account page as a person does: the e-mail asked for, the link the real SMTP
 * server receives opened, "Continue" pressed. The link names PUBLIC_BASE_URL; the test server
 * listens on an ephemeral port, so the link's path and query are opened at `baseUrl`.
 */
import type { Page } from 'playwright-core';

import type { SmtpSink } from './sources.ts';

/** Signs `email` in on `page` through the link `smtp` receives; ends on the Account page, signed in. */
export async function signInThroughLink(page: Page, baseUrl: string, smtp: SmtpSink, email: string): Promise<void> {
  await page.goto(`${baseUrl}/account`);
  await page.locator('#signin-form').getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  const mail = await smtp.waitFor((m) => m.to.includes(email));
  const link = new URL(/https?:\/\/\S+\/sign-in\?token=[\w-]+/.exec(mail.text)![0]);
  await page.goto(`${baseUrl}${link.pathname}${link.search}`);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.locator('#who').waitFor();
}
