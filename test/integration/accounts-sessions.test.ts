/**
 * Pins self-service accounts (issue 8) with a real SMTP server (smtp-server): the sign-in link
 * arrives by e-mail and signs in (HttpOnly, SameSite cookie), is single-use; the session reads
 * itself, registers a package source through /api/agpk/sources/tool (CSRF header required), and
 * manages API keys (shown once, revocable); passwords can be set, used, and reset by e-mail (the
 * reset request answers the same for unknown addresses); the e-mail routes are rate limited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await smtp?.close();
});

const LINK = /(https?:\/\/\S+\/sign-in\?token=\S+)/;

describe.each(BACKENDS)('accounts and sessions on %s', (backend) => {
  let plaza: TestPlaza;
  const email = `visitor-${backend}@example.com`;
  let cookie = '';
  let csrf = '';

  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { SMTP_URL: smtp.url, PLAZA_RATE_LIMIT_AUTH_PER_MIN: '60' } });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${plaza.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const authed = (extra: Record<string, string> = {}) => ({ cookie, 'x-csrf-token': csrf, ...extra });
  const cookieFrom = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');

  it('says which sign-in methods are on', async () => {
    const res = await fetch(`${plaza.url}/api/auth/options`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ methods: { email_link: true, password: true }, email_delivery: 'smtp' });
  });

  it('e-mails a one-time sign-in link whose page signs in with one click and an HttpOnly cookie', async () => {
    const res = await post('/api/auth/email/register-link', { email, name: 'Visitor', next: '/account' });
    expect(res.status).toBe(202);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && LINK.test(m.text));
    const link = LINK.exec(mail.text)![1]!;
    expect(link.startsWith(plaza.config.publicBaseUrl)).toBe(true);
    const token = new URL(link).searchParams.get('token')!;
    const path = new URL(link).pathname + new URL(link).search;
    const html = { accept: 'text/html' };

    // Opening the link (as a mail scanner does before its reader) shows a button and spends nothing.
    for (let i = 0; i < 2; i++) {
      const opened = await fetch(`${plaza.url}${path}`, { headers: html });
      expect(opened.status).toBe(200);
      expect(opened.headers.get('cache-control')).toBe('no-store');
      expect(opened.headers.get('referrer-policy')).toBe('same-origin');
      expect(opened.headers.getSetCookie()).toEqual([]);
      const page = await opened.text();
      expect(page).toContain('<form method="post" action="/sign-in">');
      expect(page).toContain(`name="token" value="${token}"`);
      // It names the address it signs in as: a link someone else sent does not go unnoticed.
      expect(page).toContain(`as ${email}.`);
    }
    // Links sent before the e-mail named the page go to it, unspent.
    const old = await fetch(`${plaza.url}/api/auth/email/verify?token=${token}`, { headers: html, redirect: 'manual' });
    expect(old.status).toBe(303);
    expect(old.headers.get('location')).toBe(`/sign-in?token=${token}`);
    expect(old.headers.getSetCookie()).toEqual([]);

    // Another site posting the token is refused, and the token stays usable.
    const form = (origin: string) =>
      fetch(`${plaza.url}/sign-in`, {
        method: 'POST',
        headers: { ...html, 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ token }).toString(),
        redirect: 'manual',
      });
    const foreign = await form('https://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.headers.getSetCookie()).toEqual([]);

    const signed = await form(plaza.url);
    expect(signed.status).toBe(303);
    expect(signed.headers.get('location')).toBe('/account');
    const setCookies = signed.headers.getSetCookie();
    const session = setCookies.find((c) => c.startsWith('plaza_session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).not.toMatch(/Secure/i); // plain http in tests; Secure when PUBLIC_BASE_URL is https
    cookie = cookieFrom(signed);

    const me = await fetch(`${plaza.url}/api/auth/session`, { headers: { cookie } });
    expect(me.status).toBe(200);
    const body = (await me.json()) as any;
    expect(body.account).toMatchObject({ email, name: 'Visitor', has_password: false });
    csrf = body.session.csrf_token;
    expect(csrf).toMatch(/^[0-9a-z]{20,}$/);

    // Once used, the page says so instead of offering the button.
    const spent = await (await fetch(`${plaza.url}${path}`, { headers: html })).text();
    expect(spent).toMatch(/expired or was already used/);
    expect(spent).not.toContain('<form method="post" action="/sign-in">');

    const reused = await form(plaza.url);
    expect(reused.status).toBe(400);
    expect(reused.headers.getSetCookie()).toEqual([]);
    expect(await reused.text()).toMatch(/expired or was already used/);
    const reusedJson = await post('/api/auth/email/verify', { token });
    expect(reusedJson.status).toBe(400);
    expect(((await reusedJson.json()) as any).message).toMatch(/expired or was already used/);
  });

  it('writes its e-mails in the language the visitor chose on the site', async () => {
    const address = `zh-${backend}@example.com`;
    expect(
      (await post('/api/auth/email/register-link', { email: address }, { cookie: 'plaza_locale=zh-CN' })).status,
    ).toBe(202);
    const mail = await smtp.waitFor((m) => m.to.includes(address));
    expect(mail.subject).toBe('完成创建您的 Plaza 账户');
    expect(mail.text).toContain('使用此链接创建您的 Plaza 账户并登录');
    // The link opens its page in that language too.
    const link = new URL(/(https?:\/\/\S+\/sign-in\?\S+)/.exec(mail.text)![1]!);
    expect(link.searchParams.get('locale')).toBe('zh-CN');
    const page = await (
      await fetch(`${plaza.url}${link.pathname}${link.search}`, { headers: { accept: 'text/html' } })
    ).text();
    expect(page).toContain('lang="zh-CN"');
    expect(page).toContain(`以 ${address} 的身份登录`);
  });

  it('registers a package source through /tool as a known user, and refuses it without the CSRF header', async () => {
    const body = {
      package_id: 'com.example.session',
      name: 'Session pkg',
      version: '1.0.0',
      summary: 's',
      vendor_name: 'V',
      download_uri: 'https://downloads.example.com/p.agpk',
      sha256: 'c'.repeat(64),
    };
    const noCsrf = await post('/api/agpk/sources/tool', body, { cookie });
    expect(noCsrf.status).toBe(403);
    const anonymous = await post('/api/agpk/sources/tool', body);
    expect(anonymous.status).toBe(401);
    const ok = await post('/api/agpk/sources/tool', body, authed());
    expect(ok.status).toBe(202);
    const json = (await ok.json()) as any;
    expect(json.source).toMatchObject({ trust: 'known-user', trust_label: 'known in-site user', status: 'registered' });
    const mine = (await (await fetch(`${plaza.url}/api/agpk/sources?mine=1`, { headers: { cookie } })).json()) as any;
    expect(mine.sources.map((s: any) => s.id)).toEqual([json.source.id]);
    expect((await fetch(`${plaza.url}/api/agpk/sources?mine=1`)).status).toBe(401);
    const row = await plaza.db.prisma.packageSource.findUnique({ where: { id: json.source.id } });
    const account = await plaza.db.prisma.account.findUnique({ where: { email } });
    expect(row?.accountId).toBe(account!.id);
  });

  it('creates, lists and revokes API keys for the signed-in user; the key is shown once', async () => {
    const created = await post('/api/account/keys', { name: 'ci' }, authed());
    expect(created.status).toBe(201);
    const { key, api_key } = (await created.json()) as any;
    expect(api_key).toMatch(/^plz_/);
    const check = await fetch(`${plaza.url}/api/account`, { headers: { authorization: `Bearer ${api_key}` } });
    expect(check.status).toBe(200);
    const listed = (await (await fetch(`${plaza.url}/api/account/keys`, { headers: { cookie } })).json()) as any;
    expect(listed.keys.map((k: any) => k.id)).toContain(key.id);
    expect(JSON.stringify(listed)).not.toContain(api_key);
    const revoked = await fetch(`${plaza.url}/api/account/keys/${key.id}`, { method: 'DELETE', headers: authed() });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as any).key.revoked_at).toBeTruthy();
    expect((await fetch(`${plaza.url}/api/account`, { headers: { authorization: `Bearer ${api_key}` } })).status).toBe(
      401,
    );
  });

  it('sets a password, signs out, signs in with it, and resets it by e-mail', async () => {
    expect((await post('/api/account/password', { password: 'correct horse battery' }, authed())).status).toBe(200);
    const out = await post('/api/auth/logout', {}, authed());
    expect(out.status).toBe(200);
    expect((await fetch(`${plaza.url}/api/auth/session`, { headers: { cookie } })).status).toBe(401);

    expect((await post('/api/auth/password/login', { email, password: 'wrong password!' })).status).toBe(401);
    const login = await post('/api/auth/password/login', { email, password: 'correct horse battery' });
    expect(login.status).toBe(200);
    cookie = cookieFrom(login);

    const unknown = await post('/api/auth/password/reset/request', { email: `nobody-${backend}@example.com` });
    const known = await post('/api/auth/password/reset/request', { email });
    expect(unknown.status).toBe(202);
    expect(known.status).toBe(202);
    const a = (await unknown.json()) as any;
    const b = (await known.json()) as any;
    expect(a.message).toBe(b.message);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && /reset-password\?token=/.test(m.text));
    const token = /token=(rst_[0-9a-z]+)/.exec(mail.text)![1]!;
    expect((await post('/api/auth/password/reset', { token, password: 'short' })).status).toBe(400);
    // The e-mail's link opens a page whose form (no script needed) sets the password.
    const link = new URL(/(http\S+reset-password\?token=rst_[0-9a-z]+)/.exec(mail.text)![1]!);
    const form = await fetch(`${plaza.url}${link.pathname}${link.search}`, { headers: { accept: 'text/html' } });
    expect(form.status).toBe(200);
    expect(form.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await form.text();
    expect(html).toContain('action="/reset-password"');
    expect(html).toContain(`name="token" value="${token}"`);
    const submit = (password: string) =>
      fetch(`${plaza.url}/reset-password`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: new URLSearchParams({ token, password }).toString(),
      });
    const short = await submit('short');
    expect(short.status).toBe(400);
    expect(await short.text()).toContain('Choose a password of 8 to 256 characters.');
    const done = await submit('a brand new password');
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Your password is changed.');
    expect((await post('/api/auth/password/reset', { token, password: 'another new password' })).status).toBe(400);
    // Resetting signs out every session.
    expect((await fetch(`${plaza.url}/api/auth/session`, { headers: { cookie } })).status).toBe(401);
    expect((await post('/api/auth/password/login', { email, password: 'a brand new password' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.messages.some((m) => m.to.includes(`nobody-${backend}@example.com`))).toBe(false);
  });

  it('rejects bad input with a clear 400', async () => {
    for (const [path, body] of [
      ['/api/auth/email/register-link', { email: 'not-an-email' }],
      ['/api/auth/email/register-link', { email: 'a@example.com', extra: 1 }],
      ['/api/auth/email/register-link', { email: `${'a'.repeat(400)}@example.com` }],
      ['/api/auth/password/reset/request', {}],
      ['/api/auth/email/verify', { token: 'lnk_nope' }],
    ] as const) {
      const res = await post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(((await res.json()) as any).success).toBe(false);
    }
  });

  it('marks the cookie Secure with the __Host- prefix when Plaza is served over HTTPS', async () => {
    // A second Plaza on the first one's database (addresses of its own): a new app, not a new database.
    const secure = await startTestPlaza(backend, {
      db: plaza.db,
      env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://plaza.example' },
    });
    try {
      const address = `secure-${backend}@example.com`;
      await fetch(`${secure.url}/api/auth/email/register-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: address }),
      });
      const mail = await smtp.waitFor((m) => m.to.includes(address));
      expect(mail.text).toContain('https://plaza.example/sign-in?token=');
      const token = /token=(lnk_[0-9a-z]+)/.exec(mail.text)![1]!;
      const res = await fetch(`${secure.url}/api/auth/email/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
      expect(res.status).toBe(200);
      const session = res.headers.getSetCookie().find((c) => c.startsWith('__Host-plaza_session='))!;
      expect(session).toMatch(/; Secure/i);
      expect(session).toMatch(/HttpOnly/i);
      expect(session).toMatch(/Path=\//);
      // Behind a proxy the request's Host is the upstream's; the page's own form posts with the
      // public origin, which is this site.
      await fetch(`${secure.url}/api/auth/email/register-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: address }),
      });
      const second = /token=(lnk_[0-9a-z]+)/.exec(
        (await smtp.waitFor((m) => m.to.includes(address) && !m.text.includes(token))).text,
      )![1]!;
      const form = await fetch(`${secure.url}/sign-in`, {
        method: 'POST',
        headers: {
          accept: 'text/html',
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://plaza.example',
        },
        body: new URLSearchParams({ token: second }).toString(),
        redirect: 'manual',
      });
      expect(form.status).toBe(303);
      expect(form.headers.getSetCookie().some((c) => c.startsWith('__Host-plaza_session='))).toBe(true);
    } finally {
      await secure.close();
    }
  });

  it('refuses a sign-in link after it expired', async () => {
    let now = Date.now();
    const timed = await startTestPlaza(backend, {
      db: plaza.db,
      env: { SMTP_URL: smtp.url },
      clock: { now: () => now },
    });
    try {
      const address = `late-${backend}@example.com`;
      await fetch(`${timed.url}/api/auth/email/register-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: address }),
      });
      const token = /token=(lnk_[0-9a-z]+)/.exec((await smtp.waitFor((m) => m.to.includes(address))).text)![1]!;
      now += 15 * 60_000 + 1_000;
      const res = await fetch(`${timed.url}/api/auth/email/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
      expect(res.status).toBe(400);
      expect(await timed.db.prisma.account.count({ where: { email: address } })).toBe(0);
    } finally {
      await timed.close();
    }
  });

  it('rate limits sign-in link requests per e-mail address', async () => {
    const target = `flood-${backend}@example.com`;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await post('/api/auth/email/register-link', { email: target })).status);
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s === 202).length).toBe(5);
  });
});
