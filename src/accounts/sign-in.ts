import { z } from 'zod';

import type { PrismaClient } from '../db/index.ts';
import { AuthError, type Clock, hashSecret, newId, randomToken, ValidationError } from '../kernel/index.ts';
import type { MailMessage } from '../mail/index.ts';
import { assertAcceptablePassword, hashPassword, verifyPassword } from './passwords.ts';
import type { NewSession, SessionService } from './sessions.ts';

/** Lifetimes of the one-time tokens sent by e-mail. */
export const LINK_TTL_MS = 15 * 60_000;
export const RESET_TTL_MS = 30 * 60_000;

const EmailSchema = z.string().trim().toLowerCase().max(254).pipe(z.email());

/** Normalises an e-mail address or throws a 400 naming `email`. */
export function parseEmail(value: unknown): string {
  const parsed = EmailSchema.safeParse(value);
  if (!parsed.success) throw new ValidationError('email must be a valid e-mail address.', { param: 'email' });
  return parsed.data;
}

/**
 * Most sign-in and reset e-mails sent to one address a minute, however they are asked for (the
 * HTTP routes, the platform MCP tools): nobody can flood an inbox.
 */
export const EMAILS_PER_ADDRESS_PER_MINUTE = 5;

/** The rate-limit key of an address (hashed: no address is written to Redis). */
export function emailLimitKey(email: unknown): string {
  return `email:${hashSecret(String(email).trim().toLowerCase())}`;
}

/** A same-site path to land on after sign-in; anything else becomes `/`. */
export function safeNext(value: string | null | undefined): string {
  if (typeof value !== 'string' || value.length > 512) return '/';
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(value) ? value : '/';
}

/** The account fields a signed-in user sees. */
export interface AccountView {
  id: string;
  email: string;
  name: string | null;
  hasPassword: boolean;
  createdAt: Date;
}

/** The languages system e-mails are written in (the site's locales). */
export type MailLocale = 'en' | 'zh-CN';

const MAIL: Record<
  MailLocale,
  {
    signInSubject: string;
    createSubject: string;
    signInLead: string;
    createLead: string;
    linkFooter: (minutes: number) => string;
    resetSubject: string;
    resetLead: string;
    resetFooter: (minutes: number) => string;
  }
> = {
  en: {
    signInSubject: 'Your Plaza sign-in link',
    createSubject: 'Finish creating your Plaza account',
    signInLead: 'Use this link to sign in to Plaza:',
    createLead: 'Use this link to create your Plaza account and sign in:',
    linkFooter: (minutes) =>
      `The link works once and expires in ${minutes} minutes. If you did not ask for it, ignore this e-mail.`,
    resetSubject: 'Reset your Plaza password',
    resetLead: 'Someone (hopefully you) asked to reset the password of your Plaza account. Choose a new one here:',
    resetFooter: (minutes) =>
      `The link works once and expires in ${minutes} minutes. If you did not ask for it, ignore this e-mail; your password stays as it is.`,
  },
  'zh-CN': {
    signInSubject: '您的 Plaza 登录链接',
    createSubject: '完成创建您的 Plaza 账户',
    signInLead: '使用此链接登录 Plaza：',
    createLead: '使用此链接创建您的 Plaza 账户并登录：',
    linkFooter: (minutes) => `此链接只能使用一次，${minutes} 分钟后失效。如果您没有申请，请忽略此邮件。`,
    resetSubject: '重置您的 Plaza 密码',
    resetLead: '有人（希望是您）申请重置您的 Plaza 账户密码。请在此设置新密码：',
    resetFooter: (minutes) =>
      `此链接只能使用一次，${minutes} 分钟后失效。如果您没有申请，请忽略此邮件，您的密码保持不变。`,
  },
};

/** Self-service sign-in: e-mail links, passwords, resets. Every e-mail goes through `send`. */
export interface SignInService {
  /** Sends a one-time sign-in link (an unknown address gets an account when it is used), in `locale`. */
  requestLink(input: {
    email: unknown;
    name?: string | undefined;
    next?: string | undefined;
    locale?: MailLocale | undefined;
  }): Promise<void>;
  /** Uses a sign-in link token: one time, before it expires. */
  verifyLink(token: unknown): Promise<{ account: AccountView; session: NewSession; next: string }>;
  /** The address a sign-in link token signs in as, without using it; undefined when it cannot be used. */
  linkAddress(token: unknown): Promise<string | undefined>;
  passwordLogin(email: unknown, password: unknown): Promise<{ account: AccountView; session: NewSession }>;
  /** Sends a reset link when the account has a password (in `locale`); silent otherwise. */
  requestPasswordReset(email: unknown, locale?: MailLocale): Promise<void>;
  resetPassword(token: unknown, password: unknown): Promise<void>;
  setPassword(accountId: string, password: unknown, current: unknown): Promise<void>;
  getAccount(accountId: string): Promise<AccountView | undefined>;
}

/** What createSignInService needs. */
export interface SignInDeps {
  prisma: PrismaClient;
  clock: Clock;
  sessions: SessionService;
  /** Queues a system e-mail (never waits for delivery). */
  send: (message: MailMessage) => Promise<unknown>;
  /** PUBLIC_BASE_URL: links in e-mails point here. */
  publicBaseUrl: string;
}

type AccountRow = {
  id: string;
  email: string;
  name: string | null;
  passwordHash: string | null;
  status: string;
  createdAt: Date;
};
const view = (row: AccountRow): AccountView => ({
  id: row.id,
  email: row.email,
  name: row.name,
  hasPassword: row.passwordHash !== null,
  createdAt: row.createdAt,
});

// Compared against when the account does not exist, so a wrong e-mail costs as much as a wrong password.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** Creates the sign-in service. */
export function createSignInService(deps: SignInDeps): SignInService {
  const { prisma, clock, sessions } = deps;
  const base = deps.publicBaseUrl.replace(/\/+$/, '');

  async function issue(
    purpose: 'email_link' | 'password_reset',
    email: string,
    fields: { accountId?: string | null; name?: string | null; next?: string | null },
    ttlMs: number,
  ): Promise<string> {
    const token = `${purpose === 'email_link' ? 'lnk' : 'rst'}_${randomToken(32)}`;
    const now = clock.now();
    await prisma.authToken.create({
      data: {
        id: newId('tok', now),
        purpose,
        email,
        accountId: fields.accountId ?? null,
        name: fields.name ?? null,
        next: fields.next ?? null,
        tokenHash: hashSecret(token),
        createdAt: new Date(now),
        expiresAt: new Date(now + ttlMs),
      },
    });
    return token;
  }

  /** Marks a token used in one statement, so two concurrent uses cannot both succeed. */
  async function consume(purpose: string, token: unknown) {
    if (typeof token !== 'string' || !/^(lnk|rst)_[0-9a-z]{20,80}$/.test(token))
      throw new ValidationError('This link is not valid.', { param: 'token' });
    const now = new Date(clock.now());
    const tokenHash = hashSecret(token);
    const used = await prisma.authToken.updateMany({
      where: { tokenHash, purpose, usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (used.count !== 1)
      throw new ValidationError('This link has expired or was already used; ask for a new one.', { param: 'token' });
    return (await prisma.authToken.findUnique({ where: { tokenHash } }))!;
  }

  async function findOrCreate(email: string, name: string | null): Promise<AccountRow> {
    const existing = await prisma.account.findUnique({ where: { email } });
    if (existing) return existing;
    try {
      return await prisma.account.create({
        data: { id: newId('acc', clock.now()), email, name, createdAt: new Date(clock.now()) },
      });
    } catch (error) {
      if ((error as { code?: string }).code !== 'P2002') throw error;
      return (await prisma.account.findUnique({ where: { email } }))!;
    }
  }

  return {
    async requestLink(input) {
      const email = parseEmail(input.email);
      const name = input.name?.trim().slice(0, 200) || null;
      const account = await prisma.account.findUnique({ where: { email } });
      const token = await issue(
        'email_link',
        email,
        { accountId: account?.id ?? null, name, next: safeNext(input.next) },
        LINK_TTL_MS,
      );
      const locale = input.locale ?? 'en';
      const t = MAIL[locale];
      // The link opens its page in the language the request was made in.
      const link = `${base}/sign-in?token=${token}${locale === 'en' ? '' : `&locale=${locale}`}`;
      await deps.send({
        to: email,
        subject: account ? t.signInSubject : t.createSubject,
        text: [account ? t.signInLead : t.createLead, '', link, '', t.linkFooter(LINK_TTL_MS / 60_000)].join('\n'),
      });
    },

    async verifyLink(token) {
      const row = await consume('email_link', token);
      const account = await findOrCreate(row.email, row.name);
      if (account.status !== 'active') throw new AuthError('This account is not active.');
      return { account: view(account), session: await sessions.create(account.id), next: safeNext(row.next) };
    },

    async linkAddress(token) {
      if (typeof token !== 'string' || !/^lnk_[0-9a-z]{20,80}$/.test(token)) return undefined;
      const row = await prisma.authToken.findUnique({ where: { tokenHash: hashSecret(token) } });
      const usable = row?.purpose === 'email_link' && row.usedAt === null && row.expiresAt.getTime() > clock.now();
      return usable ? row.email : undefined;
    },

    async passwordLogin(emailInput, password) {
      const email = parseEmail(emailInput);
      if (typeof password !== 'string' || password.length === 0 || password.length > 256)
        throw new ValidationError('password is required.', { param: 'password' });
      const account = await prisma.account.findUnique({ where: { email } });
      const ok = await verifyPassword(password, account?.passwordHash ?? DUMMY_HASH);
      if (!account || !ok || account.passwordHash === null) throw new AuthError('Wrong e-mail or password.');
      if (account.status !== 'active') throw new AuthError('This account is not active.');
      return { account: view(account), session: await sessions.create(account.id) };
    },

    async requestPasswordReset(emailInput, locale = 'en') {
      const email = parseEmail(emailInput);
      const account = await prisma.account.findUnique({ where: { email } });
      if (!account || account.passwordHash === null || account.status !== 'active') return;
      const token = await issue('password_reset', email, { accountId: account.id }, RESET_TTL_MS);
      const t = MAIL[locale];
      await deps.send({
        to: email,
        subject: t.resetSubject,
        text: [
          t.resetLead,
          '',
          `${base}/reset-password?token=${token}${locale === 'en' ? '' : `&locale=${locale}`}`,
          '',
          t.resetFooter(RESET_TTL_MS / 60_000),
        ].join('\n'),
      });
    },

    async resetPassword(token, password) {
      assertAcceptablePassword(password);
      const row = await consume('password_reset', token);
      if (!row.accountId) throw new ValidationError('This link is not valid.', { param: 'token' });
      const passwordHash = await hashPassword(password);
      await prisma.account.update({ where: { id: row.accountId }, data: { passwordHash } });
      await prisma.authToken.updateMany({
        where: { accountId: row.accountId, purpose: 'password_reset', usedAt: null },
        data: { usedAt: new Date(clock.now()) },
      });
      await sessions.revokeAll(row.accountId);
    },

    async setPassword(accountId, password, current) {
      assertAcceptablePassword(password);
      const account = await prisma.account.findUnique({ where: { id: accountId } });
      if (!account) throw new AuthError('Not signed in.');
      if (account.passwordHash !== null) {
        if (typeof current !== 'string' || !(await verifyPassword(current, account.passwordHash))) {
          throw new ValidationError('current_password is wrong or missing.', { param: 'current_password' });
        }
      }
      await prisma.account.update({ where: { id: accountId }, data: { passwordHash: await hashPassword(password) } });
    },

    async getAccount(accountId) {
      const row = await prisma.account.findUnique({ where: { id: accountId } });
      return row ? view(row) : undefined;
    },
  };
}
