import type { Request, Response } from 'express';
import { Router } from 'express';
import type { Redis } from 'ioredis';
import { z } from 'zod';

import {
  type AccountView,
  emailLimitKey,
  type KeyManagement,
  type NewSession,
  type SessionService,
  type SignInService,
} from '../accounts/index.ts';
import { readCookie } from '../http/index.ts';
import { ForbiddenError, RateLimitError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { parseOrThrow } from '../marketplace/index.ts';
import { createRateLimiter, rateLimit, type RateLimiter, rateLimitHeaders } from '../rate-limit/index.ts';
import { visitorLocale } from '../website/index.ts';
import { checkCsrf, cookieNames, requireSession, setSessionCookies } from './session-auth.ts';

const Email = z.string().max(320, 'at most 320 characters');
const RegisterLinkSchema = z.strictObject({
  email: Email,
  name: z.string().max(200, 'at most 200 characters').optional(),
  next: z.string().max(512).optional(),
});
const EmailOnlySchema = z.strictObject({ email: Email });
const TokenSchema = z.strictObject({ token: z.string().min(1).max(200) });
const LoginSchema = z.strictObject({ email: Email, password: z.string().max(256, 'at most 256 characters') });
const ResetSchema = z.strictObject({
  token: z.string().min(1).max(200),
  password: z.string().max(256, 'at most 256 characters'),
});
const SetPasswordSchema = z.strictObject({
  password: z.string().max(256, 'at most 256 characters'),
  current_password: z.string().max(256).optional(),
});
const NewKeySchema = z.strictObject({ name: z.string().max(100, 'at most 100 characters').optional() });
const VerifyQuerySchema = z.strictObject({ token: z.string().min(1).max(200) });

/** What the auth and account routes are built from. */
export interface AuthRouteDeps {
  signIn: SignInService;
  sessions: SessionService;
  keys: KeyManagement;
  /** `smtp` or `outbox`, shown by GET /api/auth/options. */
  emailDelivery: 'smtp' | 'outbox';
  https: boolean;
  trustProxy: boolean;
  requestsPerMinute: number;
  /** Sign-in and reset e-mails per address (emailLimitKey), shared with the platform MCP tools. */
  perEmailLimiter: RateLimiter;
  redis: Redis | undefined;
  keyPrefix: string;
  log: Logger;
}

const renderAccount = (a: AccountView) => ({
  id: a.id,
  email: a.email,
  name: a.name,
  has_password: a.hasPassword,
  created_at: a.createdAt.toISOString(),
});
const SENT_LINK =
  'If the address can receive e-mail, a sign-in link is on its way. It works once and expires in 15 minutes.';
const SENT_RESET = 'If an account with a password uses this address, a reset link is on its way.';

/**
 * Self-service accounts (issue 8): sign-in methods, e-mail sign-in links, password sign-in and
 * reset, the session, logout, and API key management for a signed-in user. Every route that
 * sends e-mail or checks a secret is rate limited per client address, and the e-mail routes per
 * address too, so nobody can flood an inbox.
 */
export function authSessionRoutes(deps: AuthRouteDeps): Router {
  const { signIn, sessions, keys } = deps;
  const names = cookieNames(deps.https);
  const limiterOptions = { redis: deps.redis, keyPrefix: deps.keyPrefix, log: deps.log };
  const perClient = rateLimit(
    createRateLimiter({
      policy: { name: 'auth', limit: deps.requestsPerMinute, windowSeconds: 60 },
      ...limiterOptions,
    }),
    { trustProxy: deps.trustProxy },
  );
  const perEmailLimiter = deps.perEmailLimiter;
  // Session, logout and key routes cost nothing to abuse but a database read: a looser limit.
  const perClientAccount = rateLimit(
    createRateLimiter({
      policy: { name: 'account', limit: deps.requestsPerMinute * 6, windowSeconds: 60 },
      ...limiterOptions,
    }),
    { trustProxy: deps.trustProxy },
  );
  const session = requireSession(sessions, deps.https);

  const router = Router();

  const limitEmail = async (res: Response, email: unknown) => {
    const decision = await perEmailLimiter.consume(emailLimitKey(email));
    if (!decision.allowed) {
      for (const [name, value] of Object.entries(rateLimitHeaders(perEmailLimiter.policy, decision)))
        res.setHeader(name, value);
      throw new RateLimitError(
        `Too many requests for this e-mail address; retry after ${decision.resetSeconds} s.`,
        decision.resetSeconds,
      );
    }
  };

  const startSession = (res: Response, session: NewSession) => setSessionCookies(res, session, deps.https);
  const signedInBody = (req: Request, account: AccountView, session: { expiresAt: Date; csrfToken: string }) => ({
    account: renderAccount(account),
    session: { expires_at: session.expiresAt.toISOString(), csrf_token: session.csrfToken },
    request_id: req.requestId,
  });

  router.get('/api/auth/options', perClientAccount, (req, res) => {
    res.json({
      methods: { email_link: true, password: true },
      email_delivery: deps.emailDelivery,
      request_id: req.requestId,
    });
  });

  router.post('/api/auth/email/register-link', perClient, async (req, res) => {
    const body = parseOrThrow(RegisterLinkSchema, req.body, 'request');
    await limitEmail(res, body.email);
    await signIn.requestLink({
      email: body.email,
      name: body.name,
      next: body.next,
      locale: visitorLocale({ cookie: req.get('cookie'), acceptLanguage: req.get('accept-language') }),
    });
    res.status(202).json({ status: 'sent', message: SENT_LINK, request_id: req.requestId });
  });

  router.get('/api/auth/email/verify', perClient, async (req, res) => {
    const query = parseOrThrow(VerifyQuerySchema, req.query, 'link');
    res.setHeader('Cache-Control', 'no-store');
    // A browser (and a mail scanner fetching the link ahead of its reader) gets the page that asks
    // for one click, which posts the token: a GET does not use it up. Links sent before the e-mail
    // pointed at that page land here.
    if (req.accepts(['html', 'json']) !== 'json') {
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.redirect(303, `/sign-in?token=${encodeURIComponent(query.token)}`);
      return;
    }
    const { account, session } = await signIn.verifyLink(query.token);
    startSession(res, session);
    res.json(signedInBody(req, account, session));
  });

  router.post('/api/auth/email/verify', perClient, async (req, res) => {
    const body = parseOrThrow(TokenSchema, req.body, 'request');
    const { account, session } = await signIn.verifyLink(body.token);
    startSession(res, session);
    res.json(signedInBody(req, account, session));
  });

  router.post('/api/auth/password/login', perClient, async (req, res) => {
    const body = parseOrThrow(LoginSchema, req.body, 'request');
    await limitEmail(res, body.email);
    const { account, session } = await signIn.passwordLogin(body.email, body.password);
    startSession(res, session);
    res.json(signedInBody(req, account, session));
  });

  router.post('/api/auth/password/reset/request', perClient, async (req, res) => {
    const body = parseOrThrow(EmailOnlySchema, req.body, 'request');
    await limitEmail(res, body.email);
    await signIn.requestPasswordReset(
      body.email,
      visitorLocale({ cookie: req.get('cookie'), acceptLanguage: req.get('accept-language') }),
    );
    res.status(202).json({ status: 'sent', message: SENT_RESET, request_id: req.requestId });
  });

  router.post('/api/auth/password/reset', perClient, async (req, res) => {
    const body = parseOrThrow(ResetSchema, req.body, 'request');
    await signIn.resetPassword(body.token, body.password);
    res.clearCookie(names.session, { path: '/', secure: deps.https, sameSite: 'lax', httpOnly: true });
    res.json({ status: 'password_changed', request_id: req.requestId });
  });

  router.get('/api/auth/session', perClientAccount, session, async (req, res) => {
    const current = req.accountSession!;
    const account = await signIn.getAccount(current.accountId);
    if (!account) throw new ForbiddenError('This account no longer exists.');
    res.setHeader('Cache-Control', 'no-store');
    res.json(signedInBody(req, account, current));
  });

  router.post('/api/auth/logout', perClientAccount, async (req, res) => {
    // Logging out an already-ended session is not an error; with a live one the CSRF header is required.
    const token = readCookie(req.get('cookie'), names.session);
    const current = token ? await sessions.authenticate(token).catch(() => undefined) : undefined;
    if (current) {
      checkCsrf(req, current);
      await sessions.revoke(current.sessionId);
    }
    res.clearCookie(names.session, { path: '/', secure: deps.https, sameSite: 'lax', httpOnly: true });
    res.clearCookie(names.csrf, { path: '/', secure: deps.https, sameSite: 'lax' });
    res.json({ status: 'signed_out', request_id: req.requestId });
  });

  router.post('/api/account/password', perClientAccount, session, async (req, res) => {
    const body = parseOrThrow(SetPasswordSchema, req.body, 'request');
    await signIn.setPassword(req.actingAccountId!, body.password, body.current_password);
    res.json({ status: 'password_changed', request_id: req.requestId });
  });

  const renderKey = (k: Awaited<ReturnType<KeyManagement['list']>>[number]) => ({
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  });

  router.get('/api/account/keys', perClientAccount, session, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ keys: (await keys.list(req.actingAccountId!)).map(renderKey), request_id: req.requestId });
  });

  router.post('/api/account/keys', perClientAccount, session, async (req, res) => {
    const body = parseOrThrow(NewKeySchema, req.body, 'request');
    const { key, secret } = await keys.create(req.actingAccountId!, body.name);
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ key: renderKey(key), api_key: secret, request_id: req.requestId });
  });

  router.delete('/api/account/keys/:id', perClientAccount, session, async (req, res) => {
    const key = await keys.revoke(req.actingAccountId!, String(req.params['id']));
    res.json({ key: renderKey(key), request_id: req.requestId });
  });

  return router;
}
