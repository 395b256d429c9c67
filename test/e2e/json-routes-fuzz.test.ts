/**
 * Property-based fuzzing (fast-check) of every HTTP route of a real `plaza serve` except the MCP
 * endpoints (fuzzed in mcp-fuzz.test.ts), driven by the table in test/support/json-routes.ts:
 * random bodies (wrong types, missing and unknown fields, huge strings, deep nesting, unicode,
 * `__proto__`/`constructor` keys, invalid JSON), random query strings and path parameters, wrong
 * content types, and every credential (none, garbage, guest token, API key, agent token, session
 * with and without its CSRF header). Each route first answers one known-good request with a 2xx
 * and one known-bad request with a 4xx, so both paths are always reached. Every answer is below
 * 500, every error is JSON in its surface's shape (website: `success/code/message/request_id`;
 * token API: the same plus an OpenAI-style `error`), the process keeps answering /health, and its
 * memory stays bounded (200 bodies of 900 KB leave RSS within 150 MiB). A NUL in any path
 * parameter or query value is a 4xx. The table must match the routes the app registers and the
 * OpenAPI document, so a new route without fuzzing fails here.
 *
 * Runs on PostgreSQL (and Redis) when TEST_DATABASE_URL (and TEST_REDIS_URL) are set, on the
 * embedded database otherwise.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../config/index.ts';
import { createPlaza } from '../../src/app/create-app.ts';
import { randomToken } from '../../src/kernel/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { runPlaza } from '../support/cli.ts';
import { createPostgresDatabase, createTestDatabase } from '../support/databases.ts';
import { registeredRoutes } from '../support/express-routes.ts';
import { type FaultUpstream, startFaultUpstream } from '../support/fault-upstreams.ts';
import { type AuthVariant, exampleRequest, type FuzzRequest, fuzzRequest } from '../support/fuzz-requests.ts';
import { callTool, type GatewayPlaza, listHealthy, startGatewayPlaza } from '../support/gateway-load.ts';
import { type FuzzContext, FUZZED_ELSEWHERE, JSON_ROUTES, type JsonRoute } from '../support/json-routes.ts';
import { approveInBrowser } from '../support/oauth.ts';
import { rssBytes } from '../support/processes.ts';
import { TEST_LIMITS } from '../support/test-limits.ts';

/** Random requests per route (after its two examples). */
const RUNS = 40;
const DATABASE = process.env['TEST_DATABASE_URL'];
const REDIS = process.env['TEST_REDIS_URL'];

interface Session {
  token: string;
  csrf: string;
}
interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

describe('every HTTP route under random input', () => {
  let plaza: GatewayPlaza;
  let upstream: FaultUpstream;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let ctx: FuzzContext;
  let guestToken = '';
  const sessions: Record<'main' | 'logout', Session> = {
    main: { token: '', csrf: '' },
    logout: { token: '', csrf: '' },
  };
  let rssBefore = 0;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${plaza.server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const sessionHeaders = (s: Session) => ({
    cookie: `plaza_session=${s.token}; plaza_csrf=${s.csrf}`,
    'x-csrf-token': s.csrf,
  });

  /** The sign-in and reset tokens in the outbox, newest first per address. */
  async function outboxTokens(): Promise<Map<string, string>> {
    const listed = await runPlaza(['outbox', 'list', '--json', '--limit', '100'], plaza.env);
    const tokens = new Map<string, string>();
    for (const line of listed.stdout.split('\n').filter(Boolean)) {
      const mail = JSON.parse(line) as { to: string; text: string };
      const token = /token=([\w-]+)/.exec(mail.text)?.[1];
      if (token && !tokens.has(mail.to)) tokens.set(mail.to, token);
    }
    return tokens;
  }

  async function signIn(token: string): Promise<Session> {
    const res = await post('/api/auth/email/verify', { token });
    expect(res.status).toBe(200);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('plaza_session='))!;
    const body = (await res.json()) as { session: { csrf_token: string } };
    return { token: cookie.slice('plaza_session='.length).split(';')[0]!, csrf: body.session.csrf_token };
  }

  beforeAll(async () => {
    database = DATABASE ? await createPostgresDatabase(DATABASE, 'plaza_fuzz') : undefined;
    upstream = await startFaultUpstream();
    const high = '1000000';
    plaza = await startGatewayPlaza({
      LOG_LEVEL: 'warn',
      PLAZA_RATE_LIMIT_INTENT_PER_MIN: high,
      PLAZA_RATE_LIMIT_LEADS_PER_MIN: high,
      PLAZA_RATE_LIMIT_AUTH_PER_MIN: high,
      PLAZA_RATE_LIMIT_SOURCES_PER_MIN: high,
      PLAZA_RATE_LIMIT_AGENTS_PER_MIN: high,
      GUEST_TOKEN_RPM_PER_IP: high,
      CHAT_RPM_PER_SUBJECT: high,
      CHAT_RPM_PER_IP: high,
      ...(database ? { DATABASE_URL: database.url } : {}),
      ...(REDIS ? { REDIS_URL: REDIS, PLAZA_RATE_LIMIT_KEY_PREFIX: `plaza-fuzz:${randomToken(6)}:` } : {}),
    });
    const apiKey = { authorization: `Bearer ${plaza.apiKey}` };
    guestToken = ((await (await post('/api/auth/guest-token', {})).json()) as any).data.token;
    const toRevoke = (await (await post('/api/agents', { display_name: 'To revoke' }, apiKey)).json()) as any;
    const toRotate = (await (await post('/api/agents', { display_name: 'To rotate' }, apiKey)).json()) as any;
    const endpointId = await listHealthy(plaza.server.url, 'recorder', upstream.url('ok'));
    const owned = async (provider: string) =>
      (
        (await (
          await post(
            '/api/mcp/listings',
            {
              provider,
              url: `http://127.0.0.1:9/${provider}`,
              registered_by: 'ops@example.com',
              summary: 'Owned by the fuzz account.',
            },
            apiKey,
          )
        ).json()) as any
      ).id as string;
    const call = await callTool(plaza.server.url, plaza.agentToken, 'recorder', { message: 'fuzz' });
    const checkpoint = (await (await fetch(`${plaza.server.url}/api/receipts/checkpoints/latest`)).json()) as any;
    const source = (await (
      await post('/api/agpk/sources', {
        package_id: 'fuzz.setup',
        name: 'Setup',
        version: '1.0.0',
        vendor_name: 'Fuzz Co',
        download_uri: 'https://packages.invalid/setup.agpk',
        sha256: 'b'.repeat(64),
      })
    ).json()) as any;

    // Sign-in links for the main session, the logout session, both verify routes and a reset.
    const emails = {
      main: plaza.email,
      logout: 'logout@example.com',
      get: 'verify-get@example.com',
      post: 'verify-post@example.com',
      page: 'verify-page@example.com',
      reset: 'reset@example.com',
      resetPage: 'reset-page@example.com',
    };
    for (const email of Object.values(emails))
      expect((await post('/api/auth/email/register-link', { email })).status).toBe(202);
    const links = await outboxTokens();
    sessions.main = await signIn(links.get(emails.main)!);
    sessions.logout = await signIn(links.get(emails.logout)!);
    const resetSession = await signIn(links.get(emails.reset)!);
    const password = `fuzz ${randomToken(8)}`;
    expect((await post('/api/account/password', { password }, sessionHeaders(sessions.main))).status).toBe(200);
    expect(
      (await post('/api/account/password', { password: `reset ${randomToken(8)}` }, sessionHeaders(resetSession)))
        .status,
    ).toBe(200);
    expect((await post('/api/auth/password/reset/request', { email: emails.reset })).status).toBe(202);
    const resetToken = (await outboxTokens()).get(emails.reset)!;
    // A second reset, for the page form the reset e-mail links to.
    const resetPageSession = await signIn(links.get(emails.resetPage)!);
    expect(
      (await post('/api/account/password', { password: `reset ${randomToken(8)}` }, sessionHeaders(resetPageSession)))
        .status,
    ).toBe(200);
    expect((await post('/api/auth/password/reset/request', { email: emails.resetPage })).status).toBe(202);
    const pageResetToken = (await outboxTokens()).get(emails.resetPage)!;
    const key = (await (
      await post('/api/account/keys', { name: 'to delete' }, sessionHeaders(sessions.main))
    ).json()) as any;
    // An OAuth client approved as the agent to rotate: a grant for the disconnect route.
    const redirect = 'http://127.0.0.1:49995/cb';
    const registered = (await (
      await post('/oauth/register', {
        redirect_uris: [redirect],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      })
    ).json()) as any;
    const authorize = new URL(`${plaza.server.url}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: registered.client_id,
      redirect_uri: redirect,
      response_type: 'code',
      scope: 'mcp',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    // PUBLIC_BASE_URL names localhost (http://localhost:$PORT); the server listens on 127.0.0.1.
    await approveInBrowser(plaza.server.url, authorize, redirect, {
      session: { token: sessions.main.token, csrfToken: sessions.main.csrf },
      agent: toRotate.data.agent.id,
      origin: plaza.server.url.replace('127.0.0.1', 'localhost'),
    });
    const grants = (await (
      await fetch(`${plaza.server.url}/api/agents/${toRotate.data.agent.id}/clients`, { headers: apiKey })
    ).json()) as any;

    ctx = {
      email: plaza.email,
      password,
      endpointId,
      ownedEndpointId: await owned('fuzz-owned'),
      endpointToRemove: await owned('fuzz-removed'),
      agentToRevoke: toRevoke.data.agent.id,
      agentToRotate: toRotate.data.agent.id,
      grantToDisconnect: grants.data.clients[0].grant_id,
      keyToDelete: key.key.id,
      callId: call.message.result._meta.platform.call_id,
      sourceId: source.source.id,
      linkTokens: { get: links.get(emails.get)!, post: links.get(emails.post)!, page: links.get(emails.page)! },
      resetToken,
      pageResetToken,
      treeSize: checkpoint.data.checkpoint.tree_size,
    };
    expect(resetToken).not.toBe(links.get(emails.reset));
    rssBefore = rssBytes(plaza.server.child.pid!);
  }, 60_000);
  afterAll(async () => {
    plaza?.server.child.kill('SIGKILL');
    await plaza?.server.exited;
    await upstream?.close();
    await database?.drop();
  });

  function credentials(variant: AuthVariant, route: JsonRoute): Record<string, string> {
    const session = sessions[route.session ?? 'main'];
    switch (variant) {
      case 'none':
        return {};
      case 'garbage':
        return { authorization: 'Bearer not.a.token' };
      case 'basic':
        return { authorization: 'Basic dXNlcjpwYXNz' };
      case 'unknown-key':
        return { authorization: `Bearer plz_${'x'.repeat(40)}` };
      case 'guest':
        return { authorization: `Bearer ${guestToken}` };
      case 'api-key':
        return { authorization: `Bearer ${plaza.apiKey}` };
      case 'agent':
        return { authorization: `Bearer ${plaza.agentToken}` };
      case 'session':
        return sessionHeaders(session);
      case 'session-no-csrf':
        return { cookie: `plaza_session=${session.token}` };
    }
  }

  async function send(route: JsonRoute, req: FuzzRequest): Promise<Answer> {
    const path = route.path.replace(/:(\w+)/g, (_, name: string) => req.params[name] ?? 'x');
    const headers: Record<string, string> = { ...req.headers, ...credentials(req.auth, route) };
    if (req.accept !== undefined) headers['accept'] = req.accept;
    if (req.contentType !== undefined) headers['content-type'] = req.contentType;
    // Without a content type the body goes as bytes, for which fetch sets none.
    const body =
      req.body === undefined
        ? undefined
        : req.contentType === undefined
          ? new TextEncoder().encode(req.body)
          : req.body;
    const res = await fetch(`${plaza.server.url}${path}${req.query ? `?${req.query}` : ''}`, {
      method: route.method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  /** Below 500; errors in the surface's JSON shape (or an HTML page for pages); 2xx bodies of the route's kind. */
  function check(route: JsonRoute, req: FuzzRequest, answer: Answer): void {
    const what = `${route.method} ${route.path} ${JSON.stringify({ ...req, body: req.body?.slice(0, 300) })} -> ${answer.status} ${answer.text.slice(0, 300)}`;
    expect(answer.status, what).toBeLessThan(500);
    const type = answer.headers.get('content-type') ?? '';
    if (answer.status >= 400) {
      if (route.kind === 'html' && type.startsWith('text/html')) return;
      expect(type, what).toMatch(/^application\/json/);
      const body = JSON.parse(answer.text);
      expect(body, what).toMatchObject({
        success: false,
        code: expect.any(String),
        message: expect.any(String),
        request_id: answer.headers.get('x-request-id'),
      });
      if (route.surface === 'token')
        expect(body.error, what).toMatchObject({ message: body.message, type: expect.any(String), code: body.code });
      else expect(body.error, what).toBeUndefined();
      return;
    }
    if (answer.status < 200 || answer.status >= 300 || answer.status === 204) return;
    if (route.kind === 'json') {
      expect(type, what).toMatch(/^application\/([\w.-]+\+)?json/);
      expect(() => JSON.parse(answer.text), what).not.toThrow();
    } else if (route.kind === 'ndjson') {
      for (const line of answer.text.split('\n').filter(Boolean)) expect(() => JSON.parse(line), what).not.toThrow();
    } else if (route.kind === 'json-or-sse') {
      if (type.startsWith('text/event-stream')) {
        for (const line of answer.text.split('\n').filter((l) => l.startsWith('data:')))
          if (line.slice(5).trim() !== '[DONE]') expect(() => JSON.parse(line.slice(5)), what).not.toThrow();
      } else expect(() => JSON.parse(answer.text), what).not.toThrow();
    } else if (route.kind === 'html') {
      expect(type, what).toMatch(/^text\/html/);
    }
  }

  it('has a table entry for every route the app registers and every path of the OpenAPI document', async () => {
    const test = await createTestDatabase('pglite');
    const app = createPlaza({
      config: loadConfig({
        ...TEST_LIMITS,
        PORT: '0',
        MCP_REGISTRY_URL: 'off',
        PLAZA_BACKGROUND: '0',
        PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-routes-')),
      }),
      db: test.db,
      log: createLogger({ level: 'silent' }),
    });
    try {
      const registered = registeredRoutes(app.app);
      const table = new Set(JSON_ROUTES.map((r) => r.registered ?? `${r.method} ${r.path}`));
      expect(
        [...registered].filter((r) => !table.has(r) && !(r in FUZZED_ELSEWHERE)),
        'routes without fuzzing',
      ).toEqual([]);
      expect(
        [...table, ...Object.keys(FUZZED_ELSEWHERE)].filter((r) => !registered.has(r)),
        'table entries the app does not register',
      ).toEqual([]);
      expect(registered.size).toBeGreaterThan(40);
    } finally {
      await app.close();
      await test.dispose();
    }
    const doc = (await (await fetch(`${plaza.server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    const table = new Set(JSON_ROUTES.map((r) => `${r.method} ${r.path}`));
    expect(
      documented.filter((r) => !table.has(r)),
      'documented routes without fuzzing',
    ).toEqual([]);
  }, 30_000);

  it.each(JSON_ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: its known-good and known-bad examples, then random input: below 500, errors in its shape',
    async (_name, route) => {
      const fuzz = route.fuzz(ctx);
      const fill = (partial: Partial<FuzzRequest>) =>
        exampleRequest({
          ...partial,
          params: {
            ...Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map((m) => [m[1]!, 'x'])),
            ...partial.params,
          },
        });
      if (fuzz.bad) {
        const bad = fill(fuzz.bad);
        const answer = await send(route, bad);
        check(route, bad, answer);
        expect(answer.status, `known-bad ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
      }
      const good = fill(fuzz.good);
      const answer = await send(route, good);
      check(route, good, answer);
      if (route.goodStatus !== undefined)
        expect(answer.status, `known-good ${answer.text.slice(0, 300)}`).toBe(route.goodStatus);
      else {
        expect(answer.status, `known-good ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(200);
        expect(answer.status, `known-good ${answer.text.slice(0, 300)}`).toBeLessThan(300);
      }

      await fc.assert(
        fc.asyncProperty(fuzzRequest(route.method, route.path, fuzz), async (req) =>
          check(route, req, await send(route, req)),
        ),
        { numRuns: RUNS },
      );
      expect((await fetch(`${plaza.server.url}/health`)).status).toBe(200);
    },
  );

  it('answers methods a path does not have with a 4xx in its shape', async () => {
    const byPath = new Map<string, JsonRoute[]>();
    for (const route of JSON_ROUTES) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
    for (const [path, routes] of byPath) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
        (m) => !routes.some((r) => r.method === m),
      )) {
        const route = { ...routes[0]!, method: method as JsonRoute['method'], kind: 'json' as const };
        const req = exampleRequest({
          params: Object.fromEntries([...path.matchAll(/:(\w+)/g)].map((m) => [m[1]!, 'x'])),
          body: method === 'GET' ? undefined : '{}',
        });
        const answer = await send(route, req);
        check(route, req, answer);
        expect(answer.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      }
    }
  });

  it('answers a NUL (%00) in any path parameter or query value with a 4xx, the gateway included', async () => {
    // PostgreSQL refuses NUL in text: these answered 500 (and the gateway 503) before.
    for (const route of JSON_ROUTES) {
      // With the credential the route accepts, so the NUL gets past authentication.
      const auth = route.fuzz(ctx).good.auth ?? 'api-key';
      const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      const requests = [
        ...names.map((name) =>
          exampleRequest({ auth, params: Object.fromEntries(names.map((n) => [n, n === name ? 'a%00b' : 'x'])) }),
        ),
        exampleRequest({
          auth,
          params: Object.fromEntries(names.map((n) => [n, 'x'])),
          query: 'q=a%00b&provider=a%00b&tool=a%00b&agin_id=a%00b&package_id=a%00b&token=a%00b',
        }),
      ];
      for (const req of requests) {
        const answer = await send(route, {
          ...req,
          body: route.method === 'GET' ? undefined : '{}',
          contentType: route.method === 'GET' ? undefined : 'application/json',
        });
        check(route, req, answer);
      }
    }
    const gateway = await fetch(`${plaza.server.url}/mcp/p/a%00b`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${plaza.agentToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(gateway.status).toBe(404);
  });

  it('holds no body: 200 bodies of 900 KB to POST routes leave RSS within 150 MiB', async () => {
    const pid = plaza.server.child.pid!;
    const before = rssBytes(pid);
    const text = 'a'.repeat(900 * 1024);
    const bodies: [string, string, Record<string, string>][] = [
      ['/api/leads', JSON.stringify({ email: 'big@example.com', scenario: 'developer', painPoint: text }), {}],
      [
        '/api/mcp/listings',
        JSON.stringify({
          provider: 'big',
          url: 'http://127.0.0.1:9/big',
          registered_by: 'ops@example.com',
          summary: text,
        }),
        {},
      ],
      [
        '/api/v1/chat/completions',
        JSON.stringify({ model: 'plaza-assistant', messages: [{ role: 'user', content: text }] }),
        { authorization: `Bearer ${guestToken}` },
      ],
      ['/api/agpk/sources', JSON.stringify({ package_id: 'big', name: text }), {}],
    ];
    let peak = before;
    for (let i = 0; i < 200; i++) {
      const [path, body, headers] = bodies[i % bodies.length]!;
      const res = await fetch(`${plaza.server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      await res.text();
      expect(res.status, path).toBeLessThan(500);
      if (i % 20 === 0) peak = Math.max(peak, rssBytes(pid));
    }
    peak = Math.max(peak, rssBytes(pid));
    // 176 MiB were sent; holding them (or a copy each) would exceed the bound.
    expect(peak - before, `RSS ${before >> 20} MiB -> peak ${peak >> 20} MiB`).toBeLessThan(150 * 1024 * 1024);
  });

  it('still answers /health after all of it, with memory bounded', async () => {
    expect((await fetch(`${plaza.server.url}/health`)).status).toBe(200);
    const after = rssBytes(plaza.server.child.pid!);
    // Generous: the heap grows and is collected lazily, and PGlite's memory never shrinks (measured
    // +230 MiB on PGlite, +160 MiB on PostgreSQL). It catches runaway growth, not a slow leak.
    expect(after - rssBefore, `RSS ${rssBefore >> 20} MiB -> ${after >> 20} MiB`).toBeLessThan(400 * 1024 * 1024);
  });
});
