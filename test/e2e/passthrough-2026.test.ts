/**
 * Pins `/mcp/p/<provider>` on MCP 2026-07-28 when client and upstream both speak it (issue 33,
 * item 1): an upstream's JSON-RPC errors (-32021 here) reach the SDK v2 client as the errors they
 * are, with their HTTP status; Plaza's own refusals parse in the SDK v2 client (`resultType`); a
 * request whose MCP headers disagree with its body is refused with -32020 before anything goes
 * upstream (the upstream records every request it gets); `/mcp/p/platform` answers `server/discover`.
 */
import type { ProtocolError } from '@modelcontextprotocol/client';
import { type Client, MissingRequiredClientCapabilityError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestAgent } from '../support/agents.ts';
import { awaitHealthy, listProvider } from '../support/endpoints.ts';
import { postMcp } from '../support/json-rpc.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const ENV = { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0', MCP_REGISTRY_URL: '' };
const MODERN = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('/mcp/p/<provider> on MCP 2026-07-28', () => {
  let plaza: TestPlaza;
  let upstream: SdkV2Upstream;
  let token = '';
  const clients: Client[] = [];

  beforeAll(async () => {
    [plaza, upstream] = await Promise.all([
      startTestPlaza('pglite', { env: ENV }),
      startSdkV2Upstream({
        legacy: 'reject',
        name: 'modern-only',
        calls: true,
        pages: [[{ name: 'echo' }, { name: 'confirm' }]],
      }),
    ]);
    token = (await createTestAgent(plaza.db.prisma, 'modern-agent@example.com', { display_name: 'Modern agent' }))
      .token;
    const id = await listProvider(plaza.url, {
      provider: 'modern',
      url: upstream.url,
      registered_by: 'ops@example.com',
      summary: 'x',
    });
    await awaitHealthy(plaza.url, id, { tries: 400, everyMs: 50 });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all([plaza?.close(), upstream?.close()]);
  });

  /** An SDK v2 client pinned to 2026-07-28 on `path`, declaring `capabilities`. */
  async function modernClient(path: string, capabilities: Record<string, unknown> = {}): Promise<Client> {
    const client = await connectV2(`${plaza.url}${path}`, token, {
      name: 'modern-agent',
      mode: { pin: MODERN },
      capabilities,
    });
    clients.push(client);
    return client;
  }

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    postMcp(`${plaza.url}${path}`, token, body, headers);

  it('lists and calls through the passthrough, the result stamped and complete', async () => {
    const client = await modernClient('/mcp/p/modern');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['confirm', 'echo']);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
    expect(result._meta?.['platform']).toMatchObject({ call_id: expect.stringMatching(/^call_/) });
  });

  it("relays an upstream's -32021 as the error it is (HTTP 400), receipted as an error", async () => {
    const client = await modernClient('/mcp/p/modern');
    const before = upstream.seen.length;
    const failure = await client.callTool({ name: 'confirm', arguments: {} }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(MissingRequiredClientCapabilityError);
    expect((failure as ProtocolError).code).toBe(-32021);
    const seen = upstream.seen.slice(before).find((s) => s.method === 'tools/call');
    expect(seen?.status).toBe(400);
    // The same answer, on the wire: the upstream's status, and the caller's id.
    const raw = await post(
      '/mcp/p/modern',
      { jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'confirm', arguments: {}, _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'confirm' },
    );
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ jsonrpc: '2.0', id: 'c-1', error: { code: -32021 } });
    // Both calls are receipted as the upstream's error (the receipt writer may still be at work).
    let receipts: { status: string; outcome: string }[] = [];
    for (let i = 0; i < 100 && receipts.length < 2; i++) {
      receipts = await plaza.db.prisma.receipt.findMany({ where: { provider: 'modern', tool: 'confirm' } });
      if (receipts.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    expect(receipts.map((r) => r.status)).toEqual(['error', 'error']);
  });

  it('gives a client that declares elicitation the input_required round trip', async () => {
    const client = await modernClient('/mcp/p/modern', { elicitation: { form: {} } });
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { ok: true } }));
    const result = await client.callTool({ name: 'confirm', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'confirmed: accept' }]);
  });

  it('refuses headers that disagree with the body with -32020, before anything goes upstream', async () => {
    const before = upstream.seen.length;
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'echo', arguments: {}, _meta: envelope },
    };
    const cases: [string, Record<string, string>][] = [
      ['version', { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/call', 'mcp-name': 'echo' }],
      ['method', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list', 'mcp-name': 'echo' }],
      ['name', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'confirm' }],
      ['missing method', { 'mcp-protocol-version': MODERN, 'mcp-name': 'echo' }],
      ['missing name', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' }],
      ['missing version', { 'mcp-method': 'tools/call', 'mcp-name': 'echo' }],
    ];
    for (const [what, headers] of cases) {
      const res = await post('/mcp/p/modern', call, headers);
      expect(res.status, what).toBe(400);
      expect(await res.json(), what).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32020 } });
    }
    // A Base64 sentinel is decoded before the comparison.
    const encoded = await post('/mcp/p/modern', call, {
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=`,
    });
    expect(encoded.status).toBe(200);
    expect(upstream.seen.slice(before).map((s) => s.method)).toEqual(['tools/call']);
  });

  it('serves /mcp/p/platform on 2026-07-28: server/discover, a private tool list, calls receipted', async () => {
    const discover = await post(
      '/mcp/p/platform',
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
    );
    expect(discover.status).toBe(200);
    const discovered = (await discover.json()) as any;
    expect(discovered.result.supportedVersions).toContain(MODERN);
    expect(discovered.result.capabilities).toMatchObject({ tools: {} });
    expect(discovered.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'plaza-platform' });
    const listed = await post(
      '/mcp/p/platform',
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(((await listed.json()) as any).result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    // The SDK's own header checks: -32020 for a header that disagrees with the body.
    const mismatch = await post(
      '/mcp/p/platform',
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' },
    );
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ id: 3, error: { code: -32020 } });

    // A subscriptions/listen stream is streamed (acknowledged at once), not held until it ends.
    const leave = new AbortController();
    const listen = await fetch(`${plaza.url}/mcp/p/platform`, {
      method: 'POST',
      signal: leave.signal,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: envelope },
      }),
    });
    expect(listen.status).toBe(200);
    expect(listen.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await listen.body!.getReader().read();
    expect(new TextDecoder().decode(first.value)).toContain('subscriptions/acknowledged');
    leave.abort();

    const client = await modernClient('/mcp/p/platform');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('account_auth_options');
    const result = await client.callTool({ name: 'account_nope', arguments: {} });
    expect(result.isError).toBe(true);
    const callId = (result._meta?.['platform'] as { call_id?: string } | undefined)?.call_id ?? '';
    expect(callId).toMatch(/^call_/);
    expect(await plaza.db.prisma.receipt.findUnique({ where: { callId } })).toMatchObject({
      provider: 'platform',
      tool: 'account_nope',
      status: 'error',
    });
  });

  it("gives Plaza's own refusals a resultType the SDK v2 client accepts", async () => {
    const client = await modernClient('/mcp/p/modern');
    // A tool name no receipt can hold is refused as a request; a call whose upstream is gone is answered in-band.
    await upstream.close();
    const result = await client.callTool({ name: 'echo', arguments: { text: 'gone' } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Call failed: /) }]);
  });
});
