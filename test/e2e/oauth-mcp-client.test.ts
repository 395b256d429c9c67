/**
 * MCP authorization end to end (issue 34) with the official SDK v2 client's OAuth support: a client
 * with no token connects to a real Plaza's `/mcp/p/<provider>` and `/mcp`, gets the 401 challenge
 * naming the Protected Resource Metadata, discovers Plaza as its authorization server, registers by
 * a Client ID Metadata Document (served by the test over HTTPS on loopback) or by Dynamic Client
 * Registration, and the test drives the consent page over plain HTTP with a signed-in session
 * (first sent to sign in, then back): a new agent is created and approved. The client then lists
 * and calls a provider's tool; the provider sees the new agent's AGIN card, the receipt names it,
 * refresh works, and after the agent is revoked its access and refresh tokens are refused.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

import {
  Client,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService, createSessionService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestTls } from '../support/agpk.ts';
import { freePort } from '../support/cli.ts';
import { awaitHealthy } from '../support/endpoints.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';
import { approveInBrowser } from '../support/oauth.ts';
import { MemoryOAuthProvider } from '../support/oauth-client.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { trustCa } from '../support/sources.ts';

const REDIRECT = 'http://127.0.0.1:49999/callback';

describe('MCP authorization with the SDK v2 client', () => {
  let plaza: TestPlaza;
  let upstream: SdkUpstream;
  let cimd: { server: Server; url: string };
  let untrust: () => void;
  let apiKey = '';
  let accountId = '';
  let session = { token: '', csrfToken: '' };

  beforeAll(async () => {
    const tls = await createTestTls();
    untrust = trustCa(tls.caCert);
    const port = await freePort();
    [plaza, upstream] = await Promise.all([
      startTestPlaza('pglite', {
        port,
        env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, PLAZA_ALLOW_PRIVATE_TARGETS: '1' },
      }),
      startSdkUpstream(),
    ]);
    const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      if (req.url === '/client.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            client_id: `${cimd.url}/client.json`,
            client_name: 'CIMD test client',
            redirect_uris: [REDIRECT],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
          }),
        );
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cimd = { server, url: `https://localhost:${(server.address() as AddressInfo).port}` };

    const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    const created = await accounts.createAccount({ email: 'holder@example.com' });
    apiKey = created.apiKey;
    accountId = created.account.id;
    session = await createSessionService({ prisma: plaza.db.prisma, clock: systemClock }).create(accountId);

    const listed = await fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: 'echoes',
        url: upstream.url,
        registered_by: 'holder@example.com',
        agin_support: true,
        summary: 'Echo provider for the OAuth test.',
      }),
    });
    expect(listed.status).toBe(201);
    const { id } = (await listed.json()) as { id: string };
    expect((await awaitHealthy(plaza.url, id)).status).toBe('healthy');
  }, 60_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => cimd?.server.close(() => resolve()));
    await upstream?.close();
    await plaza?.close();
    untrust?.();
  });

  /** Connects with the provider's tokens when it has them; with none, runs the whole flow first. */
  async function connect(provider: MemoryOAuthProvider, path: string, agentName: string): Promise<Client> {
    const url = new URL(`${plaza.url}${path}`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const client = new Client({ name: 'oauth-test', version: '1' });
    if (!provider.saved) {
      await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.authorizationUrl).toBeDefined();
      const callback = await approveInBrowser(plaza.url, provider.authorizationUrl!, REDIRECT, {
        session,
        agent: 'new',
        displayName: agentName,
        ownerContext: 'oauth-test',
      });
      expect(callback.searchParams.get('iss')).toBe(plaza.config.publicBaseUrl);
      await first.finishAuth(callback.searchParams);
      expect((provider.tokens() as StoredOAuthTokens | undefined)?.access_token).toBeTruthy();
    }
    const connected = new Client({ name: 'oauth-test', version: '1' });
    await connected.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    return connected;
  }

  async function agentsOfAccount(): Promise<
    Array<{ id: string; agin_id: string; display_name: string; status: string }>
  > {
    const res = await fetch(`${plaza.url}/api/agents`, { headers: { authorization: `Bearer ${apiKey}` } });
    return (
      (await res.json()) as {
        data: { agents: Array<{ id: string; agin_id: string; display_name: string; status: string }> };
      }
    ).data.agents;
  }

  it('answers an MCP request without a token 401 naming the Protected Resource Metadata, which names Plaza as authorization server', async () => {
    const res = await fetch(`${plaza.url}/mcp/p/echoes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(res.status).toBe(401);
    const metadataUrl = `${plaza.url}/.well-known/oauth-protected-resource/mcp/p/echoes`;
    expect(res.headers.get('www-authenticate')).toBe(`Bearer realm="plaza", resource_metadata="${metadataUrl}"`);
    const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      resource: `${plaza.url}/mcp/p/echoes`,
      authorization_servers: [plaza.url],
      scopes_supported: ['mcp'],
    });
    const as = (await (await fetch(`${plaza.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: plaza.url,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      response_types_supported: ['code'],
    });
    expect(as['registration_endpoint']).toBe(`${plaza.url}/oauth/register`);
  });

  it('shows the consent page only to a signed-in holder, unframeable, naming the client, where the answer goes, the endpoint and scopes', async () => {
    const provider = new MemoryOAuthProvider({
      redirect: REDIRECT,
      clientName: 'Test MCP client',
      clientMetadataUrl: `${cimd.url}/client.json`,
    });
    const client = new Client({ name: 'oauth-test', version: '1' });
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const toConsent = await fetch(provider.authorizationUrl!, { redirect: 'manual' });
    const cookies = toConsent.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const consentPath = toConsent.headers.get('location')!;
    const page = await fetch(new URL(consentPath, plaza.url), {
      headers: { cookie: `${cookies}; plaza_session=${session.token}`, 'accept-language': 'zh-CN' },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const text = await page.text();
    expect(text).toContain('<html lang="zh-CN">');
    expect(text).toContain('CIMD test client');
    expect(text).toContain(`位于 ${new URL(cimd.url).host} 的元数据文档`);
    expect(text).toContain('<code>127.0.0.1:49999</code>');
    expect(text).toContain(`<code>${plaza.url}/mcp</code>`);
    // Another site's post, or one without the session's CSRF token, is refused.
    for (const [origin, csrf] of [
      ['https://evil.example', session.csrfToken],
      [plaza.url, 'wrong'],
    ]) {
      const post = await fetch(new URL(consentPath, plaza.url), {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: `${cookies}; plaza_session=${session.token}`,
          'content-type': 'application/x-www-form-urlencoded',
          origin: origin!,
        },
        body: new URLSearchParams({
          csrf_token: csrf!,
          decision: 'approve',
          agent: 'new',
          display_name: 'Forged',
        }).toString(),
      });
      expect(post.status).toBe(403);
    }
    expect((await agentsOfAccount()).map((a) => a.display_name)).not.toContain('Forged');
  });

  it('signs a client in by its metadata document: it calls a provider as a new agent, which the provider sees and the receipt names', async () => {
    const provider = new MemoryOAuthProvider({
      redirect: REDIRECT,
      clientName: 'Test MCP client',
      clientMetadataUrl: `${cimd.url}/client.json`,
    });
    const client = await connect(provider, '/mcp/p/echoes', 'CIMD agent');
    expect(provider.info?.client_id).toBe(`${cimd.url}/client.json`);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    const result = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    await client.close();
    const agent = (await agentsOfAccount()).find((a) => a.display_name === 'CIMD agent');
    expect(agent).toMatchObject({ status: 'active' });
    const platform = (result._meta as { platform: { agin_id: string; call_id: string } }).platform;
    expect(platform.agin_id).toBe(agent!.agin_id);
    const seen = upstream.seen.filter((s) => s.body?.method === 'tools/call').at(-1);
    expect(seen?.body.params._meta.platform).toMatchObject({
      agin_id: agent!.agin_id,
      display_name: 'CIMD agent',
      owner_context: 'oauth-test',
    });
    const receipt = (await (
      await fetch(`${plaza.url}/api/receipts/${platform.call_id}`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { data: { receipt: Record<string, unknown> } };
    expect(receipt.data.receipt).toMatchObject({
      agin_id: agent!.agin_id,
      tool: 'echo',
      provider: 'echoes',
      status: 'ok',
    });
  });

  it('lists an agent\'s connected clients to its account only, and "disconnect" ends the client\'s tokens', async () => {
    const provider = new MemoryOAuthProvider({
      redirect: REDIRECT,
      clientName: 'Test MCP client',
      clientMetadataUrl: `${cimd.url}/client.json`,
    });
    const client = await connect(provider, '/mcp', 'Disconnect agent');
    await client.close();
    const agent = (await agentsOfAccount()).find((a) => a.display_name === 'Disconnect agent')!;
    const auth = { authorization: `Bearer ${apiKey}` };
    const listed = (await (await fetch(`${plaza.url}/api/agents/${agent.id}/clients`, { headers: auth })).json()) as {
      data: { clients: Array<Record<string, unknown>> };
    };
    expect(listed.data.clients).toEqual([
      expect.objectContaining({
        client_id: `${cimd.url}/client.json`,
        identified_by: 'document',
        resources: [`${plaza.url}/mcp`],
      }),
    ]);
    const grantId = listed.data.clients[0]!['grant_id'] as string;

    const other = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'other@example.com',
    });
    const foreign = await fetch(`${plaza.url}/api/agents/${agent.id}/clients`, {
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect(foreign.status).toBe(404);
    const foreignDisconnect = await fetch(`${plaza.url}/api/agents/${agent.id}/clients/${grantId}/disconnect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect(foreignDisconnect.status).toBe(404);

    const disconnected = await fetch(`${plaza.url}/api/agents/${agent.id}/clients/${grantId}/disconnect`, {
      method: 'POST',
      headers: auth,
    });
    expect(disconnected.status).toBe(200);
    // At once on this instance (its cached check is dropped), on the others within the cache's 2 s.
    const refused = await fetch(`${plaza.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(refused.status).toBe(401);
    expect(
      (
        await tokenRequest({
          grant_type: 'refresh_token',
          refresh_token: provider.saved!.refresh_token!,
          client_id: provider.info!.client_id,
        })
      ).status,
    ).toBe(400);
    const after = (await (await fetch(`${plaza.url}/api/agents/${agent.id}/clients`, { headers: auth })).json()) as {
      data: { clients: unknown[] };
    };
    expect(after.data.clients).toEqual([]);
    expect(
      (
        await fetch(`${plaza.url}/api/agents/${agent.id}/clients/${grantId}/disconnect`, {
          method: 'POST',
          headers: auth,
        })
      ).status,
    ).toBe(404);
  });

  it('registers an older client by DCR; its token works on /mcp only, refreshes, and dies with its agent', async () => {
    const provider = new MemoryOAuthProvider({ redirect: REDIRECT, clientName: 'Test MCP client' });
    const client = await connect(provider, '/mcp', 'DCR agent');
    expect(provider.info?.client_id).toBeTruthy();
    expect(provider.info?.client_id).not.toContain('https://');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echoes__echo');
    await client.close();
    const access = provider.saved!.access_token;
    const refresh = provider.saved!.refresh_token!;
    expect(refresh).toBeTruthy();

    // Bound to /mcp: refused on a provider's endpoint.
    const elsewhere = await fetch(`${plaza.url}/mcp/p/echoes`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${access}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // Refresh: a new pair, the old refresh token spent.
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: provider.info!.client_id,
    });
    expect(refreshed.status).toBe(200);
    const pair = refreshed.body as { access_token: string; refresh_token: string };
    expect(pair.refresh_token).not.toBe(refresh);
    provider.saved = { ...provider.saved!, access_token: pair.access_token, refresh_token: pair.refresh_token };
    const again = await connect(provider, '/mcp', 'DCR agent');
    await again.close();

    // Revoking the agent ends both tokens.
    const agent = (await agentsOfAccount()).find((a) => a.display_name === 'DCR agent')!;
    const revoked = await fetch(`${plaza.url}/api/agents/${agent.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(revoked.status).toBe(200);
    const refused = await fetch(`${plaza.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${pair.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(refused.status).toBe(401);
    const noRefresh = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: pair.refresh_token,
      client_id: provider.info!.client_id,
    });
    expect(noRefresh.status).toBe(400);
    expect(noRefresh.body).toMatchObject({ error: 'invalid_grant' });
  });

  async function tokenRequest(params: Record<string, string>): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${plaza.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: await res.json() };
  }
});
