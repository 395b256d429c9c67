/**
 * The browser's part of Plaza's OAuth authorization, over plain HTTP: a cookie jar, and a driver
 * that opens an authorization URL, checks it is sent to sign in first (unless the browser is
 * signed in already), then (signed in with a session's cookie) allows on the consent page, and follows the redirects back to the client.
 */
import { expect } from 'vitest';

/** A browser's cookies for one site, enough for the authorization and consent redirects. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }

  delete(name: string): void {
    this.cookies.delete(name);
  }

  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/** Who approves, and what they choose on the consent page. */
export interface Approval {
  /** A signed-in session of the account holder (its cookie value and CSRF token). */
  session: { token: string; csrfToken: string };
  /** `new` (then `displayName`) or the id of one of the account's agents. */
  agent: string;
  displayName?: string;
  ownerContext?: string;
  /** `approve` (default) or `deny`. */
  decision?: 'approve' | 'deny';
  /** The Origin the consent form is posted from: PUBLIC_BASE_URL's (default: `plazaUrl`'s). */
  origin?: string;
  /** The browser's cookies, kept across sign-ins (default: a fresh browser each time). */
  jar?: CookieJar;
}

/**
 * Opens `authorizationUrl` as a browser would, signs in when sent to (with `approval.session`),
 * answers the consent page, and returns the URL the client is redirected back to (a URL starting
 * with `redirectUri`).
 */
export async function approveInBrowser(
  plazaUrl: string,
  authorizationUrl: URL,
  redirectUri: string,
  approval: Approval,
): Promise<URL> {
  const jar = approval.jar ?? new CookieJar();
  const get = async (url: string) => {
    const res = await fetch(new URL(url, plazaUrl), {
      redirect: 'manual',
      headers: { cookie: jar.header(), accept: 'text/html' },
    });
    jar.take(res);
    return res;
  };
  const toConsent = await get(authorizationUrl.href);
  expect(toConsent.status).toBe(303);
  const consentPath = toConsent.headers.get('location') ?? '';
  expect(consentPath).toMatch(/^\/connect\/[\w-]+$/);
  if (!jar.has('plaza_session')) {
    // Not signed in: sent to sign in, and back here afterwards.
    const signIn = await get(consentPath);
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe(`/account?next=${encodeURIComponent(consentPath)}`);
    jar.set('plaza_session', approval.session.token);
  }
  const page = await get(consentPath);
  expect(page.status).toBe(200);
  await page.text();
  const post = await fetch(new URL(consentPath, plazaUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: jar.header(),
      'content-type': 'application/x-www-form-urlencoded',
      origin: approval.origin ?? new URL(plazaUrl).origin,
      accept: 'text/html',
    },
    body: new URLSearchParams({
      csrf_token: approval.session.csrfToken,
      decision: approval.decision ?? 'approve',
      agent: approval.agent,
      display_name: approval.displayName ?? '',
      owner_context: approval.ownerContext ?? '',
    }).toString(),
  });
  jar.take(post);
  expect(post.status).toBe(303);
  let next = post.headers.get('location') ?? '';
  for (let hop = 0; hop < 5 && !next.startsWith(redirectUri); hop++) {
    const res = await get(next);
    expect([302, 303]).toContain(res.status);
    next = res.headers.get('location') ?? '';
  }
  expect(next.startsWith(redirectUri)).toBe(true);
  return new URL(next);
}
