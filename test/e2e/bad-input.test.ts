/**
 * Bad input against a real `plaza serve`: credentials used on the wrong surface (guest token on the
 * gateway, agent token on chat, account A's API key on account B's receipts) are refused, and
 * identity a caller tries to spoof (`X-PLATFORM-*` headers, `_meta.platform`) never reaches an
 * upstream: a recording provider sees only what Plaza stamped.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runPlaza, type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { awaitHealthy, listProvider } from '../support/endpoints.ts';
import { type FaultUpstream, startFaultUpstream } from '../support/fault-upstreams.ts';
import { answerOf, postMcp } from '../support/json-rpc.ts';

const SPOOF = 'spoofed-by-caller';

describe('bad input against plaza serve', () => {
  let plaza: ServerProcess;
  let upstream: FaultUpstream;
  const account: Record<'a' | 'b', { apiKey: string; agentToken: string; aginId: string }> = {
    a: { apiKey: '', agentToken: '', aginId: '' },
    b: { apiKey: '', agentToken: '', aginId: '' },
  };

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plaza-bad-input-'));
    upstream = await startFaultUpstream();
    plaza = await startPlazaServer({
      PLAZA_DATA_DIR: dataDir,
      PLAZA_BACKGROUND: '0',
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
    });
    for (const name of ['a', 'b'] as const) {
      const created = await runPlaza(['accounts', 'create', '--email', `${name}@example.com`], {
        PLAZA_DATA_DIR: dataDir,
      });
      account[name].apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
      const agent = (await (
        await fetch(`${plaza.url}/api/agents`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account[name].apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ display_name: `Agent ${name}`, owner_context: `org-${name}` }),
        })
      ).json()) as any;
      account[name].agentToken = agent.data.token;
      account[name].aginId = agent.data.agent.agin_id;
    }
    const id = await listProvider(plaza.url, {
      provider: 'recorder',
      url: upstream.url('ok'),
      registered_by: 'ops@example.com',
      agin_support: true,
      summary: 'Records what it receives; no credentials.',
    });
    const sessionless = await listProvider(plaza.url, {
      provider: 'sessionless',
      url: upstream.url('sessionless'),
      registered_by: 'ops@example.com',
      agin_support: true,
      summary: 'Refuses GET and DELETE without a session.',
    });
    for (const listing of [id, sessionless]) await awaitHealthy(plaza.url, listing);
  }, 60_000);
  afterAll(async () => {
    plaza?.child.kill('SIGKILL');
    await upstream?.close();
  });

  const rpc = (path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
    postMcp(`${plaza.url}${path}`, token, body, headers);

  describe('error shapes on the gateway', () => {
    const gatewayHeaders = (token: string) => ({
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });

    it('answers a refusal whose body cannot be passed on (or has no id) in JSON-RPC, keeping its status', async () => {
      for (const [path, method, status, message] of [
        ['/mcp/p/recorder', 'GET', 405, 'The upstream answered HTTP 405.'],
        ['/mcp/p/sessionless', 'GET', 400, 'Bad Request: No valid session ID provided'],
        ['/mcp/p/sessionless', 'DELETE', 400, 'Bad Request: No valid session ID provided'],
      ] as const) {
        const res = await fetch(`${plaza.url}${path}`, { method, headers: gatewayHeaders(account.a.agentToken) });
        expect(res.status, `${method} ${path}`).toBe(status);
        expect(res.headers.get('content-type'), `${method} ${path}`).toMatch(/^application\/json/);
        expect(((await res.json()) as any).error, `${method} ${path}`).toMatchObject({ message });
      }
    });

    it('refuses a compressed body on every MCP endpoint with 415, calling nothing', async () => {
      const seen = upstream.seen.length;
      const body = gzipSync(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'act', arguments: {} } }),
      );
      for (const path of ['/mcp', '/mcp/p/recorder', '/mcp/p/platform']) {
        const res = await fetch(`${plaza.url}${path}`, {
          method: 'POST',
          headers: { ...gatewayHeaders(account.a.agentToken), 'content-encoding': 'gzip' },
          body,
        });
        expect(res.status, path).toBe(415);
        expect(await res.json(), path).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: 'Content-Encoding gzip is not supported on MCP endpoints; send the body uncompressed.',
          },
        });
      }
      expect(upstream.seen.length).toBe(seen);
    });

    it('refuses a body that is not UTF-8 as a parse error, calling nothing', async () => {
      const seen = upstream.seen.length;
      const body = Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"act","arguments":{"message":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}}'),
      ]);
      for (const path of ['/mcp', '/mcp/p/recorder']) {
        const res = await fetch(`${plaza.url}${path}`, {
          method: 'POST',
          headers: gatewayHeaders(account.a.agentToken),
          body:
            path === '/mcp' ? Buffer.from(body.toString('latin1').replace('"act"', '"recorder__act"'), 'latin1') : body,
        });
        expect(res.status, path).toBe(400);
        expect(await res.json(), path).toMatchObject({
          id: null,
          error: { code: -32700, message: 'Parse error: the request body is not valid UTF-8.' },
        });
      }
      expect(upstream.seen.length).toBe(seen);
    });

    it('answers a path Express cannot decode in JSON-RPC too', async () => {
      const res = await fetch(`${plaza.url}/mcp/p/%ff`, {
        method: 'POST',
        headers: gatewayHeaders(account.a.agentToken),
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'The path holds a malformed percent-encoding.' },
      });
    });

    it('names the request a refusal is about when it came alone', async () => {
      for (const params of [{ arguments: {} }, [1, 2]]) {
        const alone = await rpc('/mcp/p/recorder', account.a.agentToken, {
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params,
        });
        expect(alone.status).toBe(400);
        expect(await alone.json()).toMatchObject({
          id: 9,
          error: { code: -32602, message: 'tools/call needs params.name.' },
        });
      }
      const batch = await rpc('/mcp/p/recorder', account.a.agentToken, [
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: {} },
        { jsonrpc: '2.0', id: 10, method: 'ping' },
      ]);
      expect(await batch.json()).toMatchObject({ id: null, error: { code: -32602 } });
    });

    it('sends no error information in WWW-Authenticate to a request without a credential (RFC 6750 §3.1), and invalid_token with the reason to a bad one', async () => {
      const unknown = `agt_${'0'.repeat(13)}_${'0'.repeat(40)}`;
      for (const path of ['/mcp', '/mcp/p/recorder', '/mcp/p/platform']) {
        const none = await fetch(`${plaza.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: '{}',
        });
        expect(none.status, path).toBe(401);
        // The Protected Resource Metadata of the endpoint, under PUBLIC_BASE_URL (default http://localhost:$PORT): where an OAuth client starts (issue 34).
        const metadata = `resource_metadata="${plaza.url.replace('127.0.0.1', 'localhost')}/.well-known/oauth-protected-resource${path}"`;
        expect(none.headers.get('www-authenticate'), path).toBe(`Bearer realm="plaza", ${metadata}`);
        for (const [token, reason] of [
          // The body's "agt_…" is written "agt_..." there: error_description is printable ASCII without " and \.
          ['agt_nope', 'Invalid agent credential: the gateway takes an agent token (agt_...), from POST /api/agents.'],
          [unknown, 'Invalid or revoked agent credential.'],
          [
            account.a.apiKey,
            'This is an account API key (plz_...); the gateway takes an agent token (agt_...): create an agent with POST /api/agents and use its token.',
          ],
        ]) {
          const bad = await rpc(path, token!, { jsonrpc: '2.0', id: 1, method: 'ping' });
          expect(bad.status, path).toBe(401);
          expect(bad.headers.get('www-authenticate'), path).toBe(
            `Bearer realm="plaza", ${metadata}, error="invalid_token", error_description="${reason}"`,
          );
        }
      }
    });

    it('refuses a body over 4 MiB with the same 413 and JSON-RPC error on /mcp and /mcp/p/… (the platform connector too)', async () => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: 'x'.repeat(4 * 1024 * 1024) } },
      });
      for (const path of ['/mcp', '/mcp/p/recorder', '/mcp/p/platform']) {
        const res = await fetch(`${plaza.url}${path}`, {
          method: 'POST',
          headers: gatewayHeaders(account.a.agentToken),
          body,
        });
        expect(res.status, path).toBe(413);
        expect(await res.json(), path).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'Request body exceeds 4194304 bytes.' },
        });
      }
    });

    it('answers a refused credential under the id of the one request its POST carried, and under null otherwise', async () => {
      for (const path of ['/mcp', '/mcp/p/recorder', '/mcp/p/platform']) {
        for (const [body, id] of [
          [{ jsonrpc: '2.0', id: 7, method: 'tools/list' }, 7],
          [{ jsonrpc: '2.0', id: 'seven', method: 'ping' }, 'seven'],
          [[{ jsonrpc: '2.0', id: 7, method: 'ping' }], null],
          [{ jsonrpc: '2.0', method: 'notifications/initialized' }, null],
          // Past the 64 KiB read from a caller Plaza does not know.
          [{ jsonrpc: '2.0', id: 7, method: 'ping', params: { _meta: { pad: 'x'.repeat(70_000) } } }, null],
        ] as const) {
          const res = await rpc(path, 'agt_nope', body);
          expect(res.status, path).toBe(401);
          expect(await res.json(), `${path} ${JSON.stringify(body).slice(0, 60)}`).toEqual({
            jsonrpc: '2.0',
            id,
            error: { code: -32001, message: expect.stringMatching(/^Invalid agent credential/) },
          });
        }
      }
    });
  });

  describe('token confusion', () => {
    it('refuses a guest token on the gateway', async () => {
      const guest = (
        (await (
          await fetch(`${plaza.url}/api/auth/guest-token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          })
        ).json()) as any
      ).data.token as string;
      for (const path of ['/mcp', '/mcp/p/recorder']) {
        const res = await rpc(path, guest, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      expect(upstream.seen.filter((r) => r.body.method === 'tools/call')).toHaveLength(0);
    });

    it('refuses an agent token and an account key on the wrong routes', async () => {
      const chat = await rpc('/api/v1/chat/completions', account.a.agentToken, {
        model: 'plaza-assistant',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(chat.status).toBe(401);
      expect(((await chat.json()) as any).error.code).toBe('UNAUTHORIZED');
      const receipts = await fetch(`${plaza.url}/api/receipts`, {
        headers: { authorization: `Bearer ${account.a.agentToken}` },
      });
      expect(receipts.status).toBe(401);
      // An account API key is not an agent credential.
      expect((await rpc('/mcp', account.a.apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(401);
    });

    it("does not show account B's receipts to account A", async () => {
      const called = await answerOf(
        await rpc('/mcp/p/recorder', account.b.agentToken, {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'act', arguments: { message: 'b only' } },
        }),
      );
      const callId = called.result._meta.platform.call_id as string;
      const asB = await fetch(`${plaza.url}/api/receipts/${callId}`, {
        headers: { authorization: `Bearer ${account.b.apiKey}` },
      });
      expect(asB.status).toBe(200);
      const asA = await fetch(`${plaza.url}/api/receipts/${callId}`, {
        headers: { authorization: `Bearer ${account.a.apiKey}` },
      });
      expect(asA.status).toBe(404);
      expect(JSON.stringify(await asA.json())).not.toContain(account.b.aginId);
      const listed = (await (
        await fetch(`${plaza.url}/api/receipts?agin_id=${account.b.aginId}`, {
          headers: { authorization: `Bearer ${account.a.apiKey}` },
        })
      ).json()) as any;
      expect(listed.data.receipts).toEqual([]);
      const exported = await (
        await fetch(`${plaza.url}/api/receipts/export`, { headers: { authorization: `Bearer ${account.a.apiKey}` } })
      ).text();
      expect(exported).not.toContain(callId);
    });
  });

  describe('spoofed identity', () => {
    const spoofHeaders = {
      'x-platform-agin-id': SPOOF,
      'x-platform-agent-principal': SPOOF,
      'x-platform-call-id': SPOOF,
      'x-platform-agin-assertion': SPOOF,
      'x-platform-display-name': SPOOF,
    };
    const spoofMeta = {
      platform: { agin_id: SPOOF, agent_principal: SPOOF, display_name: SPOOF, owner_context: SPOOF, call_id: SPOOF },
    };

    it.each(['/mcp/p/recorder', '/mcp'])(
      'never forwards caller-sent X-PLATFORM-* headers or _meta.platform through %s',
      async (path) => {
        const from = upstream.seen.length;
        const tool = path === '/mcp' ? 'recorder__act' : 'act';
        const answer = await answerOf(
          await rpc(
            path,
            account.a.agentToken,
            {
              jsonrpc: '2.0',
              id: 9,
              method: 'tools/call',
              params: { name: tool, arguments: { message: 'hello' }, _meta: spoofMeta },
            },
            spoofHeaders,
          ),
        );
        expect(answer.result.isError).toBe(false);
        const calls = upstream.seen.slice(from).filter((r) => r.body.method === 'tools/call');
        expect(calls).toHaveLength(1);
        const seen = calls[0]!;
        expect(seen.body.params._meta.platform).toMatchObject({
          agin_id: account.a.aginId,
          display_name: 'Agent a',
          owner_context: 'org-a',
        });
        expect(seen.headers['x-platform-agin-id']).toBe(account.a.aginId);
        expect(seen.headers['x-platform-call-id']).toBe(seen.body.params._meta.platform.call_id);
        expect(String(seen.headers['x-platform-agin-assertion'])).toMatch(/^ey/);
        expect(seen.headers['x-platform-display-name']).toBeUndefined();
        // Nothing the caller spoofed reaches the provider, in any request of the exchange.
        expect(JSON.stringify(upstream.seen.slice(from))).not.toContain(SPOOF);
        expect(answer.result._meta.platform).toMatchObject({
          agin_id: account.a.aginId,
          call_id: seen.body.params._meta.platform.call_id,
        });
      },
    );
  });
});
