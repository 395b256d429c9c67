/**
 * Pins the HTTP edge every surface shares: /health per spec §2.14, X-Request-Id, and the error
 * shapes for unknown routes, malformed JSON, wrong content types and oversized bodies.
 */
import { request } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { sendRawHttp } from '../support/raw-http.ts';

describe.each(BACKENDS)('HTTP edge on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { PLAZA_BODY_LIMIT_BYTES: '2048' } });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  describe('GET /health', () => {
    it('answers every §2.14 field with status ok', async () => {
      const res = await fetch(`${plaza.url}/health`);
      expect(res.status).toBe(200);
      const body: any = await res.json();
      expect(body).toMatchObject({
        status: 'ok',
        service: 'plaza',
        shared_envelope: {
          success: true,
          code: 'SUCCESS',
          message: expect.any(String),
          data: { status: 'ok', service: 'plaza' },
        },
      });
      expect(body.request_id).toBe(res.headers.get('x-request-id'));
    });

    it('echoes a well-formed caller request id and replaces a malformed one', async () => {
      const echoed = await fetch(`${plaza.url}/health`, { headers: { 'x-request-id': 'trace-123.abc' } });
      expect(echoed.headers.get('x-request-id')).toBe('trace-123.abc');
      expect(((await echoed.json()) as any).request_id).toBe('trace-123.abc');
      const replaced = await fetch(`${plaza.url}/health`, { headers: { 'x-request-id': 'bad id <script>' } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^req_[0-9a-z]+$/);
    });
  });

  describe('a known path with the wrong method', () => {
    it.each([
      ['GET', '/api/mcp/listings', 'POST', 'method_not_allowed'],
      ['PUT', '/api/mcp/listings', 'POST', 'method_not_allowed'],
      ['POST', '/api/products', 'GET, HEAD', 'method_not_allowed'],
      ['GET', '/api/v1/chat/completions', 'POST', 'METHOD_NOT_ALLOWED'],
      ['GET', '/api/auth/guest-token', 'POST', 'METHOD_NOT_ALLOWED'],
    ])("%s %s answers 405 with Allow: %s, in the surface's shape", async (method, path, allow, code) => {
      const res = await fetch(`${plaza.url}${path}`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      const body = (await res.json()) as any;
      expect(body.code).toBe(code);
      expect(body.message).toBe(`${method} is not allowed on ${path}; it takes ${allow}.`);
    });

    it('still answers 404 for a path no route serves', async () => {
      for (const method of ['GET', 'POST'])
        expect((await fetch(`${plaza.url}/api/nothing-here`, { method })).status).toBe(404);
    });
  });

  describe('security headers', () => {
    it('gives API answers the API set and pages the browsing set', async () => {
      for (const path of [
        '/health',
        '/api/products',
        '/api/nothing-here',
        '/.well-known/jwks.json',
        '/openapi.json',
        '/share/v1/agpk/sources',
        '/agpk/v1/',
      ]) {
        const res = await fetch(`${plaza.url}${path}`);
        expect(res.headers.get('content-security-policy'), path).toBe("default-src 'none'; frame-ancestors 'none'");
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
        expect(res.headers.get('cross-origin-opener-policy'), path).toBeNull();
        expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
        await res.arrayBuffer();
      }
      const mcp = await fetch(`${plaza.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(mcp.status).toBe(401);
      expect(mcp.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      await mcp.arrayBuffer();
      const page = await fetch(`${plaza.url}/`);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(page.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      await page.arrayBuffer();
    });
  });

  describe('ETags', () => {
    it('gives none to an answer that carries its request_id (it could never match), and revalidates one whose bytes repeat', async () => {
      const listing = await fetch(`${plaza.url}/api/mcp/tools`);
      expect(listing.status).toBe(200);
      expect(((await listing.json()) as any).request_id).toBeTruthy();
      expect(listing.headers.get('etag')).toBeNull();

      const page = await fetch(`${plaza.url}/marketplace`, { headers: { accept: 'text/html' } });
      const etag = page.headers.get('etag');
      expect(etag).toMatch(/^"[0-9a-f]+-[\w+/]{27}"$/);
      // Not with fetch: it adds Cache-Control: no-cache to a conditional request.
      const again = await fetchRaw(plaza.url, '/marketplace', { accept: 'text/html', 'if-none-match': etag! });
      expect(again.status).toBe(304);
    });
  });

  describe('errors', () => {
    it('answers an unknown route with a JSON 404', async () => {
      const res = await fetch(`${plaza.url}/api/nothing-here`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body: any = await res.json();
      expect(body).toMatchObject({ success: false, code: 'not_found', request_id: res.headers.get('x-request-id') });
    });

    it('answers malformed JSON with 400 invalid_json', async () => {
      const res = await fetch(`${plaza.url}/api/anything`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ success: false, code: 'invalid_json' });
    });

    it('answers a body that is not UTF-8 with 400 invalid_json, storing nothing', async () => {
      // "\xff\xfe" would decode to two U+FFFD and be stored as if the client had sent them.
      const bytes = Buffer.concat([
        Buffer.from('{"provider":"badutf","url":"http://127.0.0.1:9/mcp","registered_by":"a@example.com","summary":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]);
      const listing = await fetch(`${plaza.url}/api/mcp/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: bytes,
      });
      expect(listing.status).toBe(400);
      expect(await listing.json()).toMatchObject({
        success: false,
        code: 'invalid_json',
        message: 'Request body is not valid UTF-8.',
      });
      expect(await plaza.db.prisma.mcpEndpoint.count({ where: { provider: 'badutf' } })).toBe(0);
      // The token API says so in its shape.
      const chat = await fetch(`${plaza.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]),
      });
      expect(chat.status).toBe(400);
      expect(await chat.json()).toMatchObject({ code: 'BAD_REQUEST', error: { type: 'invalid_request_error' } });
      // Valid multi-byte text passes.
      const fine = await fetch(`${plaza.url}/api/anything`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{"name":"café 日本"}'),
      });
      expect(fine.status).toBe(404);
    });

    it('answers a non-JSON body with 415', async () => {
      const res = await fetch(`${plaza.url}/api/anything`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ success: false, code: 'unsupported_media_type' });
    });

    it('answers an oversized body with 413', async () => {
      const res = await fetch(`${plaza.url}/api/anything`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ x: 'y'.repeat(5000) }),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ success: false, code: 'payload_too_large' });
    });

    it('answers token API routes in the token shape with an OpenAI-style error object', async () => {
      const res = await fetch(`${plaza.url}/api/v1/nothing`);
      expect(res.status).toBe(404);
      const body: any = await res.json();
      expect(body).toMatchObject({
        success: false,
        code: 'NOT_FOUND',
        error: { code: 'NOT_FOUND', type: 'not_found_error', param: null },
      });
    });

    it('answers a browser asking for a page that does not exist with an HTML 404 page, API clients with JSON', async () => {
      const html = { accept: 'text/html,application/xhtml+xml' };
      const page = await fetch(`${plaza.url}/no/such/page`, { headers: html });
      expect(page.status).toBe(404);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const body = await page.text();
      expect(body).toContain('<h1>Page not found</h1>');
      expect(body).toContain('href="/"');
      const zh = await fetch(`${plaza.url}/no/such/page?locale=zh-CN`, { headers: html });
      expect(zh.status).toBe(404);
      expect(await zh.text()).toContain('页面不存在');
      // JSON for clients that do not ask for HTML, for API paths, and for other methods.
      const json = await fetch(`${plaza.url}/no/such/page`);
      expect(json.status).toBe(404);
      expect(json.headers.get('content-type')).toMatch(/^application\/json/);
      for (const path of [
        '/api/nothing-here',
        '/mcp/nothing',
        '/.well-known/nothing',
        '/share/v1/nothing',
        '/agpk/v1/nothing.json',
      ]) {
        const api = await fetch(`${plaza.url}${path}`, { headers: html });
        expect(api.status, path).toBe(404);
        expect(api.headers.get('content-type'), path).toMatch(/^application\/json/);
      }
      const deleted = await fetch(`${plaza.url}/no/such/page`, { method: 'DELETE', headers: html });
      expect(deleted.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('answers 404 for the page of a package nobody registered, 200 once a source names it', async () => {
      const html = { accept: 'text/html' };
      const missing = await fetch(`${plaza.url}/packages/com.example.nobody`, { headers: html });
      expect(missing.status).toBe(404);
      expect(await missing.text()).toContain('<h1>No such package.</h1>');
      expect((await fetch(`${plaza.url}/packages/com.example.nobody`)).headers.get('content-type')).toMatch(
        /^application\/json/,
      );
      expect((await fetch(`${plaza.url}/packages/nul%00id`, { headers: html })).status).toBe(404);
      const registered = await fetch(`${plaza.url}/api/agpk/sources`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          package_id: 'com.example.somebody',
          name: 'Somebody',
          version: '1.0.0',
          vendor_name: 'Example',
          download_uri: 'https://packages.example.com/somebody-1.0.0.agpk',
          sha256: 'a'.repeat(64),
        }),
      });
      expect(registered.status, await registered.clone().text()).toBeLessThan(300);
      const found = await fetch(`${plaza.url}/packages/com.example.somebody`, { headers: html });
      expect(found.status).toBe(200);
    });

    it('keeps every link of a page on this site, whatever the path, and never fails on one', async () => {
      const get = (path: string) => fetchRaw(plaza.url, path, { accept: 'text/html' });
      for (const path of [
        '//a:99999/x',
        '//%zz/',
        '//a//b//attacker.example',
        '/\\attacker.example/x',
        '/.//attacker.example/x',
        '/marketplace/endpoints/nope//attacker.example?locale=en',
      ]) {
        const answer = await get(path);
        expect(answer.status, path).toBe(404);
        const hrefs = [...answer.body.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
        expect(hrefs.length, path).toBeGreaterThan(0);
        // Site paths, fragments and the empty data: icon; never `//host` or another origin.
        for (const href of hrefs) expect(href, `${path} -> ${href}`).toMatch(/^(?:\/(?![/\\])|#|data:,$)/);
      }
    });

    it('serves every page in the negotiated locale when the locale cookie does not decode', async () => {
      for (const path of ['/', '/marketplace', '/account', '/packages', '/reset-password', '/sign-in']) {
        const res = await fetch(`${plaza.url}${path}`, {
          headers: { accept: 'text/html', cookie: 'plaza_locale=%E0', 'accept-language': 'zh-CN' },
        });
        expect(res.status, path).toBe(200);
        expect(await res.text(), path).toContain('lang="zh-CN"');
      }
    });

    it('answers a browser whose page request is malformed with an HTML page and a 4xx, API clients with JSON', async () => {
      const html = { accept: 'text/html', 'accept-language': 'zh-CN' };
      const form = (body: string) =>
        fetch(`${plaza.url}/`, {
          method: 'POST',
          headers: { ...html, 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
      const tooManyFields = `form=lead&email=x%40example.com&scenario=growth&${Array.from({ length: 20 }, (_, i) => `f${i}=1`).join('&')}`;
      for (const [what, answer] of [
        ['a cursor that is not one', await fetch(`${plaza.url}/marketplace?cursor=garbage`, { headers: html })],
        ['a form with too many fields', await form(tooManyFields)],
        ['a form field with NUL', await form('form=lead&email=a%00b%40example.com&scenario=growth')],
      ] as const) {
        expect(answer.status, what).toBe(400);
        expect(answer.headers.get('content-type'), what).toMatch(/^text\/html/);
        const text = await answer.text();
        expect(text, what).toContain('lang="zh-CN"');
        expect(text, what).toContain('无法处理此请求');
      }
      const api = await fetch(`${plaza.url}/marketplace?cursor=garbage`, { headers: { accept: 'application/json' } });
      expect(api.status).toBe(400);
      expect(await api.json()).toMatchObject({ success: false });
    });

    it('says what is wrong with a form in the language of the page', async () => {
      const post = (path: string, body: string) =>
        fetch(`${plaza.url}${path}?locale=zh-CN`, {
          method: 'POST',
          headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
      const short = await post('/reset-password', 'token=rst_bogus&password=short');
      expect(short.status).toBe(400);
      expect(await short.text()).toContain('请选择 8 到 256 个字符的密码');
      const stale = await post('/reset-password', 'token=rst_bogus&password=a+long+enough+password');
      expect(stale.status).toBe(400);
      expect(await stale.text()).toContain('此链接已过期或已被使用');
      const long = await post('/', `form=lead&email=a%40example.com&scenario=growth&teamSize=${'9'.repeat(60)}`);
      expect(long.status).toBe(400);
      expect(await long.text()).toContain('最多 50 个字符');
    });

    it('answers a request Node cannot parse in the error shape, with a request id', async () => {
      const raw = (bytes: string) => sendRawHttp(plaza.url, bytes);
      for (const [bytes, status] of [
        ['GET / HTTP/1.1\r\nHost: x\r\nNot a header line\r\n\r\n', 400],
        [`GET / HTTP/1.1\r\nHost: x\r\nAccept-Language: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ] as const) {
        const answer = await raw(bytes);
        expect(answer.split('\r\n')[0]).toBe(
          `HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : 'Request Header Fields Too Large'}`,
        );
        const requestId = /\r\nX-Request-Id: (\S+)\r\n/.exec(answer)?.[1];
        expect(requestId).toBeTruthy();
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
          success: false,
          code: 'bad_request',
          message: expect.any(String),
          request_id: requestId,
        });
        // The operator's log has it under the same id.
        const line = plaza.logLines().find((l) => l.includes(requestId!));
        expect(line, String(status)).toBeDefined();
        expect(JSON.parse(line!)).toMatchObject({ level: 40, res: { statusCode: status }, req: { url: '/' } });
      }
    });

    it('answers a body cut short by a half-close in the shape of the path: JSON-RPC on MCP endpoints, the token shape on the token API, the error shape elsewhere', async () => {
      const account = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: `edge-${backend}@example.com`,
      });
      const token = (
        await createAgentService({ prisma: plaza.db.prisma, clock: systemClock }).create(account.account.id, {
          display_name: 'Edge agent',
        })
      ).token;
      const cut = (path: string) =>
        sendRawHttp(
          plaza.url,
          `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`,
        );
      const body = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      for (const path of ['/mcp', '/mcp/p/platform', '/mcp?x=1']) {
        const answer = await cut(path);
        expect(answer.split('\r\n')[0], path).toBe('HTTP/1.1 400 Bad Request');
        expect(body(answer), path).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: expect.stringMatching(/body ended before/) },
        });
      }
      for (const path of ['/api/leads']) {
        const answer = await cut(path);
        expect(body(answer), path).toMatchObject({
          success: false,
          code: 'bad_request',
          message: expect.stringMatching(/body ended before/),
        });
      }
      // A token API path answers in the token shape, as its other errors do.
      for (const path of ['/api/auth/guest-token', '/api/v1/chat/completions']) {
        const answer = await cut(path);
        expect(answer.split('\r\n')[0], path).toBe('HTTP/1.1 400 Bad Request');
        expect(body(answer), path).toMatchObject({
          success: false,
          code: 'BAD_REQUEST',
          error: {
            type: 'invalid_request_error',
            code: 'BAD_REQUEST',
            param: null,
            message: expect.stringMatching(/body ended before/),
          },
        });
      }
    });

    it('never answers HTML or leaks a stack', async () => {
      const res = await fetch(`${plaza.url}/%E0%A4%A`);
      expect(res.status).toBeLessThan(500);
      const text = await res.text();
      expect(text).not.toMatch(/<html|at .*\.ts:\d+/i);
    });
  });
});

/** A GET with the path sent exactly as given (fetch would normalise `//host` and backslashes). */
function fetchRaw(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method: 'GET', path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
