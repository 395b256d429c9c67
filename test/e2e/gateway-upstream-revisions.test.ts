/**
 * The pool speaks what the upstream speaks (issue 33, item 2): an SDK v2 server that speaks only
 * MCP 2026-07-28, listed and probed as Plaza lists any provider, is called through `/mcp` by an SDK
 * v1 client (2025) and an SDK v2 client. Each call reaches the upstream as a stateless 2026-07-28
 * request (no initialize, no session; Plaza's envelope and the AGIN card in `_meta`, the standard
 * headers), and leaves one receipt whose inclusion proof verifies.
 * Runs on PGlite and, when TEST_DATABASE_URL is set, PostgreSQL.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { awaitHealthy } from '../support/endpoints.ts';
import { apiJson } from '../support/gateway-load.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { inclusionVerifies } from '../support/receipts.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const ENV = { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0' };

describe.each(BACKENDS)('/mcp to a provider that speaks only 2026-07-28, on %s', (backend) => {
  let plaza: TestPlaza;
  let weather: SdkV2Upstream;
  let apiKey = '';
  let token = '';
  let aginId = '';

  const json = (path: string, init?: RequestInit) => apiJson(plaza.url, apiKey, path, init);

  beforeAll(async () => {
    [plaza, weather] = await Promise.all([
      startTestPlaza(backend, { env: ENV }),
      startSdkV2Upstream({ legacy: 'reject', pages: [[{ name: 'forecast', description: 'Tomorrow.' }]] }),
    ]);
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'revisions@example.com',
      })
    ).apiKey;
    const listed = await json('/api/mcp/listings', {
      method: 'POST',
      body: JSON.stringify({ provider: 'weather', url: weather.url, registered_by: 'ops@example.com', summary: 'x' }),
    });
    expect(listed.status).toBe(201);
    const endpoint = await awaitHealthy(plaza.url, listed.body.id, { tries: 200, everyMs: 50 });
    expect(endpoint).toMatchObject({ status: 'healthy', protocol_versions: ['2026-07-28'] });
    const agent = await json('/api/agents', {
      method: 'POST',
      body: JSON.stringify({ display_name: 'Revisions agent', owner_context: 'acme' }),
    });
    token = agent.body.data.token;
    aginId = agent.body.data.agent.agin_id;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([plaza?.close(), weather?.close()]);
  });

  /** The receipt of `callId`: ok, with an inclusion proof that verifies against its checkpoint. */
  async function expectVerifiedReceipt(callId: string): Promise<void> {
    const { status, body } = await json(`/api/receipts/${callId}`);
    expect(status).toBe(200);
    const { receipt, inclusion, checkpoint } = body.data;
    expect(receipt).toMatchObject({ call_id: callId, agin_id: aginId, provider: 'weather', tool: 'forecast' });
    expect(receipt.status).toBe('ok');
    expect(inclusionVerifies({ receipt, inclusion, checkpoint })).toBe(true);
  }

  /** The tools/call the upstream saw for `callId`: stateless, with Plaza's envelope and the AGIN card. */
  function expectStatelessCall(callId: string): void {
    const seen = weather.seen.filter((s) => s.method === 'tools/call');
    const call = seen.find((s) => (s.meta?.['platform'] as { call_id?: string } | undefined)?.call_id === callId);
    expect(call, 'the upstream saw the call').toBeDefined();
    expect(call!.status).toBe(200);
    expect(call!.headers).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'forecast',
    });
    expect(call!.headers['mcp-session-id']).toBeUndefined();
    expect(call!.meta).toMatchObject({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'plaza-gateway' },
      'io.modelcontextprotocol/clientCapabilities': {},
      platform: { agin_id: aginId, call_id: callId, display_name: 'Revisions agent', owner_context: 'acme' },
    });
    // The gateway never tried to open a session with it (the probe asks initialize once, to record the revisions).
    const opened = weather.seen.filter((s) => s.method === 'initialize').map((s) => s.params?.['clientInfo']);
    expect(opened).toEqual([{ name: 'plaza-prober', version: '1.0.0' }]);
  }

  it('calls its tool for an SDK v1 client (2025): one stateless request upstream, a verified receipt', async () => {
    const client = new Client({ name: 'v1-agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('weather__forecast');
      const result = await client.callTool({ name: 'weather__forecast', arguments: { city: 'Oslo' } });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: 'text', text: 'forecast {"city":"Oslo"}' }]);
      const callId = (result._meta as any).platform.call_id as string;
      expectStatelessCall(callId);
      await expectVerifiedReceipt(callId);
    } finally {
      await client.close();
    }
  });

  it('calls its tool for an SDK v2 client, whatever revision it speaks with /mcp', async () => {
    const client = await connectV2(`${plaza.url}/mcp`, token, { name: 'v2-agent', mode: 'auto' });
    try {
      const result = await client.callTool({ name: 'weather__forecast', arguments: { city: 'Bergen' } });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: 'text', text: 'forecast {"city":"Bergen"}' }]);
      const callId = (result._meta as any).platform.call_id as string;
      expectStatelessCall(callId);
      await expectVerifiedReceipt(callId);
    } finally {
      await client.close();
    }
  });
});
