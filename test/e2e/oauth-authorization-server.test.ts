/**
 * Plaza's OAuth authorization server (issue 34) through a second, strict client library,
 * oauth4webapi: its metadata (issuer compared exactly), DCR, PKCE S256 and the `iss` of the
 * authorization response (RFC 9207) are checked by the library itself. Then the refusals: a wrong
 * or missing PKCE verifier, a code used twice (its tokens are revoked too), a redirect URI not
 * registered, a token for another resource, a resource that is not a gateway endpoint, an expired
 * token, a refresh token used twice (the whole grant is revoked), RFC 7009 revocation, and client
 * metadata documents that are too large, too slow, or on a private address.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService, createSessionService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestTls } from '../support/agpk.ts';
import { freePort } from '../support/cli.ts';
import { approveInBrowser, CookieJar } from '../support/oauth.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { trustCa } from '../support/sources.ts';

const REDIRECT = 'http://127.0.0.1:49998/cb';
const insecure = { [oauth.allowInsecureRequests]: true };

describe('the authorization server, checked by oauth4webapi', () => {
  let plaza: TestPlaza;
  let strictPlaza: TestPlaza;
  let documents: { server: Server; url: string };
  let untrust: () => void;
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  let session = { token: '', csrfToken: '' };

  beforeAll(async () => {
    const tls = await createTestTls();
    untrust = trustCa(tls.caCert);
    const [port, strictPort] = await Promise.all([freePort(), freePort()]);
    [plaza, strictPlaza] = await Promise.all([
      startTestPlaza('pglite', {
        port,
        env: {
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          PLAZA_ALLOW_PRIVATE_TARGETS: '1',
          PLAZA_OAUTH_CIMD_TIMEOUT_MS: '500',
          PLAZA_BACKGROUND: '0',
        },
      }),
      // The default: no private addresses, so a metadata document on loopback is refused.
      startTestPlaza('pglite', {
        port: strictPort,
        env: { PUBLIC_BASE_URL: `http://127.0.0.1:${strictPort}`, PLAZA_BACKGROUND: '0' },
      }),
    ]);
    const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const doc = {
        client_id: `${documents.url}${req.url}`,
        client_name: 'Document client',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      };
      if (req.url === '/ok.json')
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      if (req.url === '/large.json')
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...doc, client_name: 'x'.repeat(6000) }));
      if (req.url === '/slow.json') {
        const timer = setTimeout(
          () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc)),
          3000,
        );
        res.on('close', () => clearTimeout(timer));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    documents = { server, url: `https://localhost:${(server.address() as AddressInfo).port}` };

    const account = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'strict@example.com',
    });
    session = await createSessionService({ prisma: plaza.db.prisma, clock: systemClock }).create(account.account.id);

    const issuer = new URL(plaza.config.publicBaseUrl);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await registerClient('Strict client', { application_type: 'native' });
    client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
  }, 60_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => documents?.server.close(() => resolve()));
    await Promise.all([plaza?.close(), strictPlaza?.close()]);
    untrust?.();
  });

  /** Registers a public client (RFC 7591) redirecting to REDIRECT, with `extra` metadata. */
  async function registerClient(name: string, extra: Record<string, unknown> = {}) {
    return oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          client_name: name,
          ...extra,
        } as never,
        insecure,
      ),
    );
  }

  /** An authorization request's URL: `client` (or `clientId`) asking `mcp` on `resource` (default /mcp), PKCE S256. */
  async function authorizationUrl(options: {
    clientId?: string;
    redirectUri?: string;
    resource?: string | string[] | null;
    state?: string;
    verifier?: string;
  }): Promise<URL> {
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: options.clientId ?? client.client_id,
      redirect_uri: options.redirectUri ?? REDIRECT,
      response_type: 'code',
      scope: 'mcp',
      state: options.state ?? oauth.generateRandomState(),
      code_challenge: await oauth.calculatePKCECodeChallenge(options.verifier ?? oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }).toString();
    if (options.resource !== null)
      for (const resource of [options.resource ?? `${plaza.url}/mcp`].flat())
        url.searchParams.append('resource', resource);
    return url;
  }

  /** An authorization request of `client` (PKCE S256, state) the holder approves as a new agent; returns the callback and verifier. */
  async function authorize(
    options: {
      resource?: string | string[];
      redirectUri?: string;
      clientId?: string;
      jar?: CookieJar;
      displayName?: string;
      /** An agent of the account's, instead of a new one. */
      agent?: string;
    } = {},
  ): Promise<{ callback: URL; verifier: string; state: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = await authorizationUrl({ ...options, state, verifier });
    const callback = await approveInBrowser(plaza.url, url, options.redirectUri ?? REDIRECT, {
      session,
      agent: options.agent ?? 'new',
      displayName: options.displayName ?? 'Strict agent',
      ...(options.jar ? { jar: options.jar } : {}),
    });
    return { callback, verifier, state };
  }

  async function redeem(
    callback: URL,
    verifier: string | typeof oauth.nopkce,
    state: string,
    resource = `${plaza.url}/mcp`,
  ): Promise<Response> {
    const params = oauth.validateAuthResponse(as, client, callback, state);
    return oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, {
      additionalParameters: { resource },
      ...insecure,
    });
  }

  async function gateway(path: string, token: string): Promise<Response> {
    return fetch(`${plaza.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
  }

  async function tokenError(response: Response): Promise<string> {
    const error = await oauth.processAuthorizationCodeResponse(as, client, response).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    return (error as oauth.ResponseBodyError).error;
  }

  it('publishes metadata a strict client accepts, and answers a PKCE S256 flow with iss; the token works on its resource', async () => {
    expect(as).toMatchObject({
      issuer: plaza.config.publicBaseUrl,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      revocation_endpoint: `${plaza.url}/oauth/revoke`,
    });
    const openid = await oauth.processDiscoveryResponse(
      new URL(plaza.config.publicBaseUrl),
      await oauth.discoveryRequest(new URL(plaza.config.publicBaseUrl), { algorithm: 'oidc', ...insecure }),
    );
    expect(openid.issuer).toBe(as.issuer);
    const { callback, verifier, state } = await authorize();
    expect(callback.searchParams.get('iss')).toBe(as.issuer);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, verifier, state));
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope).toBe('mcp');
    expect((await gateway('/mcp', tokens.access_token)).status).toBe(200);
  });

  it('signs in again in the same browser as another agent: both connections keep working, each as its agent', async () => {
    const browser = new CookieJar();
    const tokensAs = async (displayName: string) => {
      const { callback, verifier, state } = await authorize({ jar: browser, displayName });
      return oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, verifier, state));
    };
    const first = await tokensAs('First agent');
    const second = await tokensAs('Second agent');
    const agentOf = async (token: string) =>
      (await plaza.db.prisma.oAuthRecord.findUniqueOrThrow({ where: { kind_id: { kind: 'AccessToken', id: token } } }))
        .agentId;
    const [firstAgent, secondAgent] = [await agentOf(first.access_token), await agentOf(second.access_token)];
    expect(firstAgent).toMatch(/^agt_/);
    expect(secondAgent).toMatch(/^agt_/);
    expect(secondAgent).not.toBe(firstAgent);
    for (const tokens of [first, second]) expect((await gateway('/mcp', tokens.access_token)).status).toBe(200);
    // The first connection's refresh token still works after the second sign-in.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure),
    );
    expect((await gateway('/mcp', refreshed.access_token)).status).toBe(200);
  });

  it('never issues a code without the consent page: not after sign-out, nor to a client it authorized before', async () => {
    // A web client (no application_type): oidc-provider asks native clients for consent anyway.
    const web = await registerClient('Web client');
    const browser = new CookieJar();
    await authorize({ jar: browser, displayName: 'Remembered agent', clientId: web.client_id });
    /** The same client's next authorization request, opened in that browser: where it is sent. */
    const again = async () => {
      const url = await authorizationUrl({ clientId: web.client_id });
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: browser.header(), accept: 'text/html' } });
      browser.take(res);
      await res.body?.cancel();
      return res.headers.get('location') ?? '';
    };
    // Still signed in: the consent page again (where another agent may be picked), not a code.
    expect(await again()).toMatch(/^\/connect\/[\w-]+$/);
    // Signed out of Plaza (the provider's own cookies kept): the consent page, which asks to sign in.
    browser.delete('plaza_session');
    const consent = await again();
    expect(consent).toMatch(/^\/connect\/[\w-]+$/);
    const page = await fetch(new URL(consent, plaza.url), {
      redirect: 'manual',
      headers: { cookie: browser.header(), accept: 'text/html' },
    });
    await page.body?.cancel();
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`/account?next=${encodeURIComponent(consent)}`);
  });

  it('authorizing a client again as the same agent extends its grant rather than adding a connection', async () => {
    const browser = new CookieJar();
    const first = await authorize({ jar: browser, displayName: 'Returning agent' });
    const firstTokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await redeem(first.callback, first.verifier, first.state),
    );
    const { agentId } = await plaza.db.prisma.oAuthRecord.findUniqueOrThrow({
      where: { kind_id: { kind: 'AccessToken', id: firstTokens.access_token } },
    });
    const second = await authorize({ jar: browser, agent: agentId! });
    const secondTokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await redeem(second.callback, second.verifier, second.state),
    );
    const grants = await plaza.db.prisma.oAuthRecord.findMany({ where: { kind: 'Grant', agentId } });
    expect(grants).toHaveLength(1);
    for (const tokens of [firstTokens, secondTokens])
      expect((await gateway('/mcp', tokens.access_token)).status).toBe(200);
  });

  it('answers response_mode=form_post with a page whose script its CSP allows by hash (nothing else)', async () => {
    const url = await authorizationUrl({});
    url.searchParams.set('response_mode', 'form_post');
    const jar = new CookieJar();
    const get = async (to: string | URL) => {
      const res = await fetch(new URL(to, plaza.url), {
        redirect: 'manual',
        headers: { cookie: jar.header(), accept: 'text/html' },
      });
      jar.take(res);
      return res;
    };
    const consent = (await get(url)).headers.get('location')!;
    jar.set('plaza_session', session.token);
    await (await get(consent)).text();
    const post = await fetch(new URL(consent, plaza.url), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(plaza.url).origin,
      },
      body: new URLSearchParams({
        csrf_token: session.csrfToken,
        decision: 'approve',
        agent: 'new',
        display_name: 'Form post agent',
        owner_context: '',
      }).toString(),
    });
    jar.take(post);
    const page = await get(post.headers.get('location')!);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`<form method="post" action="${REDIRECT}">`);
    expect(html).toMatch(/name="code" value="[^"]+"/);
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const digest = createHash('sha256').update(script).digest('base64');
    const csp = page.headers.get('content-security-policy') ?? '';
    const scriptSrc = csp.split(';').find((d) => d.trim().startsWith('script-src')) ?? '';
    expect(scriptSrc.trim().split(/\s+/).slice(1).sort()).toEqual([`'report-sample'`, `'sha256-${digest}'`].sort());
    expect(csp).toContain("default-src 'none'");
  });

  it("on the consent page: refuses another account's agent and a card text the agent service refuses, in the page; a decline sends access_denied", async () => {
    const other = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'someone-else@example.com',
    });
    const foreignAgent = await createAgentService({ prisma: plaza.db.prisma, clock: systemClock }).create(
      other.account.id,
      { display_name: 'Not yours' },
    );
    const url = await authorizationUrl({ state: 's1', resource: null });
    const jar = new CookieJar();
    const start = await fetch(url, { redirect: 'manual' });
    jar.take(start);
    const consent = new URL(start.headers.get('location')!, plaza.url);
    jar.set('plaza_session', session.token);
    const post = async (fields: Record<string, string>, accept = 'text/html') => {
      const res = await fetch(consent, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: jar.header(),
          origin: plaza.url,
          'content-type': 'application/x-www-form-urlencoded',
          accept,
        },
        body: new URLSearchParams({ csrf_token: session.csrfToken, ...fields }).toString(),
      });
      jar.take(res);
      return res;
    };
    const foreign = await post({ decision: 'approve', agent: foreignAgent.agent.id });
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toContain('Choose one of your active agents, or a new one.');
    const badName = await post({ decision: 'approve', agent: 'new', display_name: 'Bad\u200bname' });
    expect(badName.status).toBe(400);
    expect(await badName.text()).toContain('Invalid agent: display_name: holds U+200B');
    // A client that does not ask for HTML gets the site's JSON error, as on every page route.
    const asJson = await post({ decision: 'approve', agent: 'new', display_name: '' }, 'application/json');
    expect(asJson.status).toBe(400);
    expect(await asJson.json()).toMatchObject({
      success: false,
      code: 'bad_request',
      message: 'Give the new agent a display name, or choose one of your agents.',
    });
    const declined = await post({ decision: 'deny' });
    expect(declined.status).toBe(303);
    const resume = await fetch(new URL(declined.headers.get('location')!, plaza.url), {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    const back = new URL(resume.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s1');
    expect(back.searchParams.get('iss')).toBe(as.issuer);
  });

  it("answers a path under /oauth/ the provider has no route for with Plaza's 404 (the error shape, a request id)", async () => {
    for (const path of ['/oauth/nope', '/oauth/introspect', '/oauth/session/end']) {
      const res = await fetch(`${plaza.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      const body = (await res.json()) as { success: boolean; request_id: string };
      expect(body.success, path).toBe(false);
      expect(body.request_id, path).toBe(res.headers.get('x-request-id'));
    }
  });

  it('refuses a wrong or missing PKCE verifier', async () => {
    const wrong = await authorize();
    expect(await tokenError(await redeem(wrong.callback, oauth.generateRandomCodeVerifier(), wrong.state))).toBe(
      'invalid_grant',
    );
    const missing = await authorize();
    expect(await tokenError(await redeem(missing.callback, oauth.nopkce, missing.state))).toMatch(
      /^invalid_(grant|request)$/,
    );
  });

  it('refuses a code used twice, and revokes the tokens the first use got', async () => {
    const { callback, verifier, state } = await authorize();
    const first = await oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, verifier, state));
    expect(await tokenError(await redeem(callback, verifier, state))).toBe('invalid_grant');
    expect((await gateway('/mcp', first.access_token)).status).toBe(401);
  });

  it('does not redirect to a redirect URI the client did not register (no open redirect)', async () => {
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: 'https://evil.example/cb',
      response_type: 'code',
      scope: 'mcp',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('redirect_uri did not match any of the client');
  });

  it('binds a token to its resource: refused on another provider and on /mcp; a resource that is no gateway endpoint is refused', async () => {
    const resource = `${plaza.url}/mcp/p/alpha`;
    const { callback, verifier, state } = await authorize({ resource });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await redeem(callback, verifier, state, resource),
    );
    for (const path of ['/mcp/p/beta', '/mcp']) {
      const res = await gateway(path, tokens.access_token);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate'), path).toContain(
        `error_description="This access token was issued for ${resource}`,
      );
    }
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'mcp',
      resource: 'https://elsewhere.example/api',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }).toString();
    const refused = await fetch(url, { redirect: 'manual' });
    expect(refused.status).toBe(303);
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
  });

  it('grants each resource a request names (RFC 8707 allows several); a token is then asked for one of them', async () => {
    const [alpha, beta] = [`${plaza.url}/mcp/p/alpha`, `${plaza.url}/mcp/p/beta`];
    const { callback, verifier, state } = await authorize({ resource: [alpha, beta] });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await redeem(callback, verifier, state, beta),
    );
    const onBeta = await gateway('/mcp/p/beta', tokens.access_token);
    // Past the credential check: the provider is not listed (404), not a refused token (401).
    expect(onBeta.status).toBe(404);
    expect((await gateway('/mcp/p/alpha', tokens.access_token)).status).toBe(401);
  });

  it('refuses an expired access token', async () => {
    const { callback, verifier, state } = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, verifier, state));
    // Its lifetime run out (15 minutes are not waited for): the stored record says so.
    const past = new Date(Date.now() - 1000);
    const record = await plaza.db.prisma.oAuthRecord.findUniqueOrThrow({
      where: { kind_id: { kind: 'AccessToken', id: tokens.access_token } },
    });
    await plaza.db.prisma.oAuthRecord.update({
      where: { kind_id: { kind: 'AccessToken', id: tokens.access_token } },
      data: { expiresAt: past, payload: { ...(record.payload as object), exp: Math.floor(past.getTime() / 1000) } },
    });
    const res = await gateway('/mcp', tokens.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('rotates refresh tokens; a refresh token used twice revokes the whole grant', async () => {
    const { callback, verifier, state } = await authorize();
    const first = await oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, verifier, state));
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure),
    );
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await gateway('/mcp', second.access_token)).status).toBe(200);
    const reuse = await oauth
      .processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((reuse as oauth.ResponseBodyError).error).toBe('invalid_grant');
    // The whole grant: the newest refresh token and access token die with it.
    const after = await oauth
      .processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), second.refresh_token!, insecure),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((after as oauth.ResponseBodyError).error).toBe('invalid_grant');
    // Within the credential cache's 2 s at most.
    let status = 200;
    for (let i = 0; i < 30 && status === 200; i++) {
      status = (await gateway('/mcp', second.access_token)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
  });

  it('revokes an access token (RFC 7009)', async () => {
    const { callback, verifier, state } = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, verifier, state));
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, insecure),
    );
    expect((await gateway('/mcp', tokens.access_token)).status).toBe(401);
  });

  it('signs in a client by its metadata document, and refuses one that is too large, too slow, or on a private address', async () => {
    const ok = await authorize({ clientId: `${documents.url}/ok.json` });
    expect(ok.callback.searchParams.get('code')).toBeTruthy();
    for (const [target, path, why] of [
      [plaza, '/large.json', 'Refused: response larger than 5120 bytes.'],
      [plaza, '/slow.json', 'aborted due to timeout'],
      [strictPlaza, '/ok.json', 'it resolves to a loopback address'],
    ] as const) {
      const url = new URL(`${target.url}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: `${documents.url}${path}`,
        redirect_uri: REDIRECT,
        response_type: 'code',
        scope: 'mcp',
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: 'S256',
      }).toString();
      const res = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html' } });
      expect(res.status, path).toBe(400);
      expect(res.headers.get('location'), path).toBeNull();
      // The browser sees the site's page with the generic refusal; the operator's log says why.
      expect(await res.text(), path).toContain('<code>invalid_client</code>: client_id metadata document fetch failed');
      const logged = target.logLines().filter((line) => line.includes('oauth: authorization refused'));
      expect(
        logged.some((line) => line.includes(why)),
        path,
      ).toBe(true);
    }
  });
});

describe("PLAZA_OAUTH=0, the OAuth request limit, and the issuer's endpoints", () => {
  let plaza: TestPlaza;
  let limited: TestPlaza;
  let named: TestPlaza;
  beforeAll(async () => {
    const port = await freePort();
    [plaza, limited, named] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_OAUTH: '0', PLAZA_BACKGROUND: '0' } }),
      startTestPlaza('pglite', { env: { PLAZA_RATE_LIMIT_OAUTH_PER_MIN: '2', PLAZA_BACKGROUND: '0' } }),
      // PUBLIC_BASE_URL names the machine as users reach it; requests come in under another name.
      startTestPlaza('pglite', {
        port,
        env: { PUBLIC_BASE_URL: `https://plaza.example:${port}`, PLAZA_BACKGROUND: '0' },
      }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([plaza?.close(), limited?.close(), named?.close()]);
  });

  it("names the issuer's endpoints in its metadata whatever Host and scheme a request came with", async () => {
    for (const headers of [{}, { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }]) {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const metadata = (await (await fetch(`${named.url}${path}`, { headers })).json()) as Record<string, unknown>;
        expect(metadata['issuer']).toBe(named.config.publicBaseUrl);
        for (const name of [
          'authorization_endpoint',
          'token_endpoint',
          'registration_endpoint',
          'revocation_endpoint',
        ]) {
          expect(String(metadata[name]), `${path} ${name}`).toMatch(
            new RegExp(`^${named.config.publicBaseUrl.replace(/[.]/g, '\\.')}/oauth/`),
          );
        }
        expect(metadata['jwks_uri']).toBe(`${named.config.publicBaseUrl}/.well-known/jwks.json`);
      }
    }
  });

  it('answers a client address past PLAZA_RATE_LIMIT_OAUTH_PER_MIN registrations and authorization requests 429, and never counts the token endpoint', async () => {
    const register = () =>
      fetch(`${limited.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          application_type: 'native',
        }),
      });
    expect((await register()).status).toBe(201);
    expect((await fetch(`${limited.url}/oauth/authorize?client_id=x`, { redirect: 'manual' })).status).toBe(400);
    const third = await register();
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) {
      const token = await fetch(`${limited.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=nope&client_id=nope',
      });
      expect(token.status).not.toBe(429);
    }
  });

  it('offers no OAuth: the 401 names no metadata, and the OAuth routes are not there', async () => {
    const res = await fetch(`${plaza.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="plaza"');
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/oauth/register',
      '/connect/x',
    ]) {
      expect((await fetch(`${plaza.url}${path}`)).status, path).toBe(404);
    }
  });
});
