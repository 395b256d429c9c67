/**
 * A listed MCP server that serves only callers with a credential of its own (HTTP 401 to anyone
 * else, as MCP authorization has it), against a real `plaza serve` and the SDK's client: the probe
 * finds it up but gated (`auth_required`, no tools online), and an agent that brings the
 * provider's credential as X-PLATFORM-Upstream-Authorization lists and calls its tools through
 * `/mcp/p/<provider>`, stamped and receipted; an agent without it is told where it goes.
 */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { childEnv, plazaArgs, runPlaza, type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';

const SECRET = 'provider-secret-4711';

describe('a listed MCP server that needs a credential of its own', () => {
  let plaza: ServerProcess;
  let upstream: SdkUpstream;
  let apiKey = '';
  let token = '';
  let endpointId = '';

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plaza-gated-'));
    upstream = await startSdkUpstream({ requireBearer: SECRET });
    plaza = await startPlazaServer({
      PLAZA_DATA_DIR: dataDir,
      PLAZA_BACKGROUND: '0',
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      LOG_LEVEL: 'warn',
    });
    const created = await runPlaza(['accounts', 'create', '--email', 'gated@example.com'], { PLAZA_DATA_DIR: dataDir });
    apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const agent = (await (
      await fetch(`${plaza.url}/api/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: 'Gated agent' }),
      })
    ).json()) as any;
    token = agent.data.token;
    const listed = await fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: 'gated',
        url: upstream.url,
        registered_by: 'ops@example.com',
        agin_support: true,
        summary: 'Needs Authorization: Bearer <token of this provider>.',
        required_credentials: [{ name: 'Authorization', description: 'A token of this provider' }],
      }),
    });
    expect(listed.status).toBe(201);
    endpointId = ((await listed.json()) as { id: string }).id;
  }, 60_000);

  afterAll(async () => {
    plaza?.child.kill('SIGKILL');
    await upstream?.close();
  });

  function connect(headers: Record<string, string>) {
    const transport = new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp/p/gated`), {
      requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
    });
    return { client: new Client({ name: 'gated-agent', version: '1.0.0' }), transport };
  }

  it('is probed as up but gated: auth_required, with no tools online and none on /mcp', async () => {
    await expect
      .poll(async () => ((await (await fetch(`${plaza.url}/api/mcp/endpoints/${endpointId}`)).json()) as any).status, {
        timeout: 10_000,
      })
      .toBe('auth_required');
    const endpoint = (await (await fetch(`${plaza.url}/api/mcp/endpoints/${endpointId}?probes=1`)).json()) as any;
    expect(JSON.stringify(endpoint)).toMatch(/needs credentials \(HTTP 401\)/);
    const gatedOnes = (await (await fetch(`${plaza.url}/api/mcp/endpoints?status=auth_required`)).json()) as any;
    expect(gatedOnes.endpoints.map((e: any) => e.id)).toEqual([endpointId]);
    const tools = (await (await fetch(`${plaza.url}/api/mcp/tools?provider=gated`)).json()) as any;
    expect(tools.tools).toEqual([]);
    const aggregate = await fetch(`${plaza.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const listed = await aggregate.text();
    expect(listed).toContain('platform__');
    expect(listed).not.toContain('gated__');
    // The marketplace page says what the status means.
    expect(await (await fetch(`${plaza.url}/marketplace`)).text()).toContain('needs credentials');
  });

  it('answers a call of one of its tools on /mcp with where to call it: /mcp/p/<provider>, with the credential', async () => {
    for (const headers of [
      {},
      { 'x-platform-upstream-provider': 'gated', 'x-platform-upstream-authorization': `Bearer ${SECRET}` },
    ]) {
      const res = await fetch(`${plaza.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'gated__echo', arguments: { message: 'via /mcp' } },
        }),
      });
      const answer = (await res.json()) as any;
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0].text).toBe(
        'Unknown tool gated__echo: provider gated serves only callers with a credential of their own, so /mcp lists none of its tools; call them on /mcp/p/gated with that credential in X-PLATFORM-Upstream-Authorization; nothing was called.',
      );
      const receipt = (await (
        await fetch(`${plaza.url}/api/receipts/${answer.result._meta.platform.call_id}`, {
          headers: { authorization: `Bearer ${apiKey}` },
        })
      ).json()) as any;
      expect(receipt.data.receipt).toMatchObject({ provider: 'gated', tool: 'echo', status: 'error' });
    }
    expect(upstream.seen.filter((s) => s.body?.method === 'tools/call')).toEqual([]);
  });

  it('serves an agent that brings the provider credential, stamped and receipted', async () => {
    const { client, transport } = connect({ 'x-platform-upstream-authorization': `Bearer ${SECRET}` });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    const result = (await client.callTool({ name: 'echo', arguments: { message: 'through the gate' } })) as any;
    expect(result.content[0].text).toBe('echo: through the gate');
    const callId = result._meta.platform.call_id as string;
    // The provider got its own credential, never the agent's Plaza token.
    const call = upstream.seen.find((s) => s.body?.method === 'tools/call' && s.body.id === callId);
    expect(call?.body.params._meta.platform.call_id).toBe(callId);
    const receipt = (await (
      await fetch(`${plaza.url}/api/receipts/${callId}`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as any;
    expect(JSON.stringify(receipt)).toContain('"status":"ok"');
    expect(JSON.stringify(receipt)).not.toContain(SECRET);
    await client.close();
  });

  it('tells an agent without the credential, or with a wrong one, where it goes instead of relaying the 401', async () => {
    const bare = connect({});
    await expect(bare.client.connect(bare.transport)).rejects.toThrow(
      /needs a credential of its own .*X-PLATFORM-Upstream-Authorization/,
    );
    const answer = await fetch(`${plaza.url}/mcp/p/gated`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-platform-upstream-authorization': 'Bearer wrong',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(answer.status).toBe(403);
    // The provider's authorization flow is not the caller's to run against Plaza.
    expect(answer.headers.get('www-authenticate')).toBeNull();
    expect(((await answer.json()) as any).error.message).toMatch(
      /refused the credential sent as X-PLATFORM-Upstream-Authorization/,
    );
    // A blank header sends nothing upstream: the caller is told it needs one, not that it was refused.
    const blank = await fetch(`${plaza.url}/mcp/p/gated`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-platform-upstream-authorization': '  ',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(blank.status).toBe(403);
    expect(((await blank.json()) as any).error.message).toMatch(/needs a credential of its own/);
  });

  it('takes a 401 without a Bearer challenge (Basic auth, a REST API) for a failure, not for a server that wants tokens', async () => {
    const basic = createServer((_req, res) =>
      res.writeHead(401, { 'www-authenticate': 'Basic realm="intranet"' }).end(),
    );
    await new Promise<void>((resolve) => basic.listen(0, '127.0.0.1', resolve));
    try {
      const listed = await fetch(`${plaza.url}/api/mcp/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          provider: 'basic-site',
          url: `http://127.0.0.1:${(basic.address() as AddressInfo).port}/mcp`,
          registered_by: 'ops@example.com',
          agin_support: false,
          summary: 'Not an MCP server.',
        }),
      });
      const id = ((await listed.json()) as { id: string }).id;
      await expect
        .poll(
          async () =>
            (((await (await fetch(`${plaza.url}/api/mcp/endpoints/${id}?probes=1`)).json()) as any).probes ?? [])
              .length,
          { timeout: 10_000 },
        )
        .toBeGreaterThan(0);
      const endpoint = (await (await fetch(`${plaza.url}/api/mcp/endpoints/${id}?probes=1`)).json()) as any;
      expect(endpoint.status).not.toBe('auth_required');
      expect(endpoint.probes[0]).toMatchObject({ ok: false, error: expect.stringMatching(/HTTP 401/) });
      // Not routable either.
      const routed = await fetch(`${plaza.url}/mcp/p/basic-site`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-platform-upstream-authorization': 'Basic dXNlcjpwYXNz',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(routed.status).toBe(404);
    } finally {
      basic.close();
    }
  });

  it('works through plaza mcp connect with --upstream-token-env, and says what is missing without it', async () => {
    const credentials = join(mkdtempSync(join(tmpdir(), 'plaza-gated-cred-')), 'agent.json');
    expect(
      (
        await runPlaza(['agents', 'login', '--token', token, '--url', plaza.url], {
          PLAZA_CREDENTIALS_FILE: credentials,
        })
      ).code,
    ).toBe(0);
    const bridge = (args: string[], env: Record<string, string>) =>
      new StdioClientTransport({
        command: process.execPath,
        args: plazaArgs('mcp', 'connect', 'gated', ...args),
        env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials, ...env }) as Record<string, string>,
        stderr: 'pipe',
      });
    // Four bridges, each its own process and client, run side by side.
    const passesTheCredential = async () => {
      const withToken = new Client({ name: 'stdio-agent', version: '1' });
      await withToken.connect(bridge(['--upstream-token-env', 'GATED_TOKEN'], { GATED_TOKEN: SECRET }));
      const result = (await withToken.callTool({ name: 'echo', arguments: { message: 'over stdio' } })) as any;
      expect(result.content[0].text).toBe('echo: over stdio');
      expect(result._meta.platform.call_id).toMatch(/^call_/);
      await withToken.close();
    };
    const saysWhatIsMissing = async () => {
      const without = new Client({ name: 'stdio-agent', version: '1' });
      const bare = bridge([], {});
      let warned = '';
      bare.stderr?.on('data', (chunk: Buffer) => (warned += chunk.toString()));
      await expect(without.connect(bare)).rejects.toThrow(/X-PLATFORM-Upstream-Authorization/);
      // Said at start too, from the catalog: the provider is auth_required.
      await expect
        .poll(() => warned, { timeout: 10_000 })
        .toMatch(
          /warning: provider "gated" answers only callers with a credential of their own: pass --upstream-token-env <NAME>/,
        );
      await without.close().catch(() => undefined);
    };

    // Through /mcp the credential goes to the one provider named for it, and must be named.
    const all = (args: string[]) =>
      new StdioClientTransport({
        command: process.execPath,
        args: plazaArgs('mcp', 'connect', '--all', '--upstream-token-env', 'GATED_TOKEN', ...args),
        env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials, GATED_TOKEN: SECRET }) as Record<string, string>,
        stderr: 'pipe',
      });
    const refusesUnnamed = async () => {
      const unscoped = all([]);
      let said = '';
      unscoped.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
      const refused = new Client({ name: 'stdio-agent', version: '1' });
      await expect(refused.connect(unscoped)).rejects.toThrow();
      expect(said).toMatch(/--upstream-provider <provider>/);
      await refused.close().catch(() => undefined);
    };
    const takesNamed = async () => {
      const scoped = new Client({ name: 'stdio-agent', version: '1' });
      // /mcp takes the credential once it names its provider (unnamed, it answers 400 and connect fails).
      const named = all(['--upstream-provider', 'gated']);
      let told = '';
      named.stderr?.on('data', (chunk: Buffer) => (told += chunk.toString()));
      await scoped.connect(named);
      expect(Array.isArray((await scoped.listTools()).tools)).toBe(true);
      // But an auth_required provider's tools are not on /mcp: the bridge says so at start.
      await expect
        .poll(() => told, { timeout: 10_000 })
        .toMatch(
          /warning: --upstream-provider gated: provider "gated" answers only callers with a credential of their own, so its tools are not on \/mcp/,
        );
      await scoped.close();
    };
    await Promise.all([passesTheCredential(), saysWhatIsMissing(), refusesUnnamed(), takesNamed()]);
  });
});
