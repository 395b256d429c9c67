/**
 * The whole path a newcomer takes, through Plaza's HTTP surfaces only: list server-everything,
 * see it go healthy, create an account agent, call its tools through `/mcp/p/<provider>` and
 * `/mcp` with the official SDK client (on `/mcp` listed as server-everything publishes them,
 * outputSchema included, but for the tool that runs only as a task; a provider's tool with a
 * non-object inputSchema left out, so one bad tool does not break the SDK client's tools/list), verify the AGIN assertion a
 * provider would see against Plaza's JWKS, and find one receipt per call (with an inclusion
 * proof) in `GET /api/receipts`. Runs on PGlite and, when TEST_DATABASE_URL is set, PostgreSQL.
 */
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { startChild } from '../support/children.ts';
import { childEnv, plazaArgs, runPlaza } from '../support/cli.ts';
import { BACKENDS } from '../support/databases.ts';
import { awaitHealthy } from '../support/endpoints.ts';
import { apiJson } from '../support/gateway-load.ts';
import { type EverythingServer, startEverything, startFixtureProvider } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe.each(BACKENDS)('gateway through the running app on %s', (backend) => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let apiKey = '';
  let agentToken = '';
  let aginId = '';

  beforeAll(async () => {
    [plaza, everything] = await Promise.all([
      startTestPlaza(backend, { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1' } }),
      startEverything(),
    ]);
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'auditor@example.com',
      })
    ).apiKey;
  }, 60_000);
  afterAll(async () => {
    await everything?.stop();
    await plaza?.close();
  });

  const json = (path: string, init?: RequestInit, key = apiKey) => apiJson(plaza.url, key, path, init);

  it('lists server-everything and its tools go online', async () => {
    const listed = await json('/api/mcp/listings', {
      method: 'POST',
      body: JSON.stringify({
        provider: 'everything',
        url: everything.url,
        registered_by: 'ops@example.com',
        agin_support: true,
        summary: 'Reference MCP server; no credentials needed; logs agin_id.',
      }),
    });
    expect(listed.status).toBe(201);
    let status = 'registered';
    for (let i = 0; i < 100 && status === 'registered'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await json(`/api/mcp/endpoints/${listed.body.id}`)).body.status;
    }
    expect(status).toBe('healthy');
  });

  it('creates an agent with POST /api/agents; a guest token may not', async () => {
    const created = await json('/api/agents', {
      method: 'POST',
      body: JSON.stringify({ display_name: 'Stack agent', owner_context: 'acme' }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      success: true,
      code: 'CREATED',
      data: { agent: { display_name: 'Stack agent', status: 'active' } },
    });
    agentToken = created.body.data.token;
    aginId = created.body.data.agent.agin_id;
    const guest = (await json('/api/auth/guest-token', { method: 'POST', body: '{}' })).body.data.token as string;
    const refused = await json('/api/agents', { method: 'POST', body: JSON.stringify({ display_name: 'x' }) }, guest);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
  });

  it('calls tools through /mcp/p/everything and /mcp, leaving one receipt per call', async () => {
    const headers = { authorization: `Bearer ${agentToken}` };
    const direct = new Client({ name: 'stack-agent', version: '1' });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp/p/everything`), { requestInit: { headers } }),
    );
    const one = await direct.callTool({ name: 'echo', arguments: { message: 'one' } });
    expect((one._meta as any).platform.agin_id).toBe(aginId);
    await direct.close();

    const aggregate = new Client({ name: 'stack-agent', version: '1' });
    await aggregate.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), { requestInit: { headers } }),
    );
    expect((await aggregate.listTools()).tools.map((t) => t.name)).toContain('everything__echo');
    const two = await aggregate.callTool({ name: 'everything__echo', arguments: { message: 'two' } });
    await aggregate.close();

    const callIds = [(one._meta as any).platform.call_id, (two._meta as any).platform.call_id];
    const listed = await json(`/api/receipts?agin_id=${aginId}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.receipts.map((r: any) => r.call_id).sort()).toEqual([...callIds].sort());
    for (const receipt of listed.body.data.receipts)
      expect(receipt).toMatchObject({ agin_id: aginId, tool: 'echo', provider: 'everything', status: 'ok' });
    const single = await json(`/api/receipts/${callIds[0]}`);
    expect(single.status).toBe(200);
    expect(single.body.data.receipt.call_id).toBe(callIds[0]);
  });

  it('lists each tool on /mcp as server-everything publishes it (title, outputSchema, execution), and its structured content validates in the SDK client', async () => {
    const direct = new Client({ name: 'stack-agent', version: '1' });
    await direct.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    const published = (await direct.listTools()).tools;
    await direct.close();
    expect(published.find((t) => t.name === 'get-structured-content')?.outputSchema).toBeDefined();

    const aggregate = new Client({ name: 'stack-agent', version: '1' });
    await aggregate.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
      }),
    );
    const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
    // Compared in one order: the catalog lists by name, the provider in its own order.
    const listed = (await aggregate.listTools()).tools.filter((t) => t.name.startsWith('everything__')).sort(byName);
    // All but the tool that runs only as a task (/mcp relays no tasks; see the next test).
    const callable = published.filter((t) => t.execution?.taskSupport !== 'required');
    expect(callable.length).toBe(published.length - 1);
    expect(listed).toEqual(callable.map((t) => ({ ...t, name: `everything__${t.name}` })).sort(byName));
    // The client now checks the call's structuredContent against the listed outputSchema (it throws when it does not match).
    const weather = await aggregate.callTool({
      name: 'everything__get-structured-content',
      arguments: { location: 'Chicago' },
    });
    expect(weather.isError).toBeFalsy();
    expect(weather.structuredContent).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
    await aggregate.close();
  });

  it("leaves a provider's tool with a non-object inputSchema out of the catalog and drops annotations not in MCP's shape, so the SDK client still lists /mcp", async () => {
    const fixture = await startFixtureProvider([
      [
        { name: 'alpha', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
        { name: 'beta', inputSchema: { type: 'string' } },
        { name: 'gamma', inputSchema: { type: 'object' }, annotations: { readOnlyHint: 'yes' } },
      ],
    ]);
    try {
      const listed = await json('/api/mcp/listings', {
        method: 'POST',
        body: JSON.stringify({
          provider: 'oddtools',
          url: fixture.url,
          registered_by: 'ops@example.com',
          summary: 'A provider with one bad tool among good ones.',
        }),
      });
      expect(listed.status).toBe(201);
      const endpoint = await awaitHealthy(plaza.url, listed.body.id);
      expect(endpoint).toMatchObject({
        status: 'healthy',
        tool_count: 2,
        last_probe: { ok: true, error: 'Left out 1 tool whose inputSchema is not an object schema: "beta".' },
      });
      const aggregate = new Client({ name: 'stack-agent', version: '1' });
      await aggregate.connect(
        new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
        }),
      );
      // The gateway's catalog follows the probe within its cache time.
      const odd = async () => (await aggregate.listTools()).tools.filter((t) => t.name.startsWith('oddtools__'));
      await expect
        .poll(async () => (await odd()).map((t) => t.name).sort(), { timeout: 5_000 })
        .toEqual(['oddtools__alpha', 'oddtools__gamma']);
      const tools = await odd();
      await aggregate.close();
      expect(tools.find((t) => t.name === 'oddtools__gamma')?.annotations ?? {}).toEqual({});
    } finally {
      await fixture.close();
    }
  });

  it('leaves a tool that runs only as a task off /mcp, refuses a call to it with where it works, and keeps it in the catalog API', async () => {
    const aggregate = new Client({ name: 'stack-agent', version: '1' });
    await aggregate.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
      }),
    );
    expect((await aggregate.listTools()).tools.map((t) => t.name)).not.toContain('everything__simulate-research-query');
    const refused = await aggregate.callTool({
      name: 'everything__simulate-research-query',
      arguments: { topic: 'tasks' },
    });
    await aggregate.close();
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]!.text).toBe(
      'Tool everything__simulate-research-query runs only as a task (execution.taskSupport "required"), which /mcp does not relay: call it as a task on /mcp/p/everything; nothing was called.',
    );
    const receipt = await json(`/api/receipts/${(refused._meta as any).platform.call_id}`);
    expect(receipt.body.data.receipt).toMatchObject({
      agin_id: aginId,
      provider: 'everything',
      tool: 'simulate-research-query',
      status: 'error',
    });
    const listed = (await json('/api/mcp/tools?provider=everything&limit=100')).body.tools;
    expect(listed.find((t: any) => t.tool === 'simulate-research-query')).toMatchObject({
      execution: { taskSupport: 'required' },
      gateway_name: 'everything__simulate-research-query',
    });
  });

  it('stamps and receipts a /mcp call of a tool no connector has, or arguments too deep to pass', async () => {
    const aggregate = new Client({ name: 'stack-agent', version: '1' });
    await aggregate.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
      }),
    );
    let deep: unknown = 'x';
    for (let i = 0; i < 300; i++) deep = [deep];
    const asked = [
      { name: 'nobody__echo', arguments: {}, provider: 'nobody', tool: 'echo', text: /Unknown tool nobody__echo/ },
      {
        name: 'noseparator',
        arguments: {},
        provider: '(unknown)',
        tool: 'noseparator',
        text: /Unknown tool noseparator/,
      },
      {
        name: 'everything__echo',
        arguments: { message: deep },
        provider: 'everything',
        tool: 'echo',
        text: /nest deeper/,
      },
    ];
    for (const ask of asked) {
      const result = await aggregate.callTool({ name: ask.name, arguments: ask.arguments });
      expect(result.isError, ask.name).toBe(true);
      expect((result.content as { text: string }[])[0]!.text).toMatch(ask.text);
      const platform = (result._meta as any)?.platform;
      expect(platform?.agin_id, ask.name).toBe(aginId);
      const receipt = await json(`/api/receipts/${platform.call_id}`);
      expect(receipt.status, ask.name).toBe(200);
      expect(receipt.body.data.receipt).toMatchObject({
        agin_id: aginId,
        provider: ask.provider,
        tool: ask.tool,
        status: 'error',
      });
    }
    await aggregate.close();
  });

  it('bridges a stdio MCP client to the gateway with plaza agents login + plaza mcp connect', async () => {
    const credentials = join(mkdtempSync(join(tmpdir(), 'plaza-cred-')), 'agent.json');
    // Three commands that store nothing, run side by side: the agent's id given for its token, a
    // well-formed token the gateway does not know, and a bridge with no credential at all.
    const [byId, unknown, missing] = await Promise.all([
      runPlaza(['agents', 'login', '--token', 'agt_01k813up8gjt5430echh6767dt', '--url', plaza.url], {
        PLAZA_CREDENTIALS_FILE: credentials,
      }),
      runPlaza(['agents', 'login', '--token', `agt_${'a'.repeat(13)}_${'b'.repeat(40)}`, '--url', plaza.url], {
        PLAZA_CREDENTIALS_FILE: credentials,
      }),
      runPlaza(['mcp', 'connect', 'everything'], { PLAZA_CREDENTIALS_FILE: `${credentials}.none` }),
    ]);
    // The agent's id has the token's prefix: the mix-up is named.
    expect(byId.code).toBe(1);
    expect(byId.stderr).toContain("that is an agent's id, not its token");
    // A well-formed token the gateway does not know is refused, and nothing is stored.
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('refuses this agent token');
    expect(existsSync(credentials)).toBe(false);
    const login = await runPlaza(['agents', 'login', '--token', agentToken, '--url', plaza.url], {
      PLAZA_CREDENTIALS_FILE: credentials,
    });
    expect(login.code).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ verified: true });
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: plazaArgs('mcp', 'connect', 'everything'),
      env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials }) as Record<string, string>,
      stderr: 'pipe',
    });
    const bridged = new Client({ name: 'stdio-agent', version: '1' });
    await bridged.connect(transport);
    const result = await bridged.callTool({ name: 'echo', arguments: { message: 'over stdio' } });
    expect(JSON.stringify(result.content)).toContain('over stdio');
    expect((result._meta as any).platform.agin_id).toBe(aginId);
    await bridged.close();
    // No credential, and a credential file that is damaged: each said as what it is.
    expect(missing.code).toBe(1);
    // Named with the file it looked at: an MCP client starts the bridge with few environment
    // variables, so a login made with PLAZA_CREDENTIALS_FILE or XDG_CONFIG_HOME set is not found.
    expect(missing.stderr.trim()).toBe(
      `plaza: no agent credential in ${credentials}.none: run \`plaza agents login --token <agent token>\` first. (If you logged in with PLAZA_CREDENTIALS_FILE or XDG_CONFIG_HOME set, set the same in this server's "env" in your MCP client's config: clients start it with few environment variables.)`,
    );
    writeFileSync(credentials, 'not json');
    const damaged = await runPlaza(['mcp', 'connect', 'everything'], { PLAZA_CREDENTIALS_FILE: credentials });
    expect(damaged.code).toBe(1);
    expect(damaged.stderr.trim()).toBe(
      `plaza: the credential file ${credentials} is not JSON: run \`plaza agents login --token <agent token>\` to store the credential again.`,
    );
  });

  /**
   * A credential file with the test agent logged in, for the bridges below (the login itself is
   * checked above): stored once, as a user does, not once per bridge.
   */
  let loggedIn: Promise<string> | undefined;
  const storedCredential = () =>
    (loggedIn ??= (async () => {
      const credentials = join(mkdtempSync(join(tmpdir(), 'plaza-cred-')), 'agent.json');
      expect(
        (
          await runPlaza(['agents', 'login', '--token', agentToken, '--url', plaza.url], {
            PLAZA_CREDENTIALS_FILE: credentials,
          })
        ).code,
      ).toBe(0);
      return credentials;
    })());

  it('opens a new gateway session under the stdio client when the provider restarted and forgot the old one', async () => {
    const credentials = await storedCredential();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: plazaArgs('mcp', 'connect', 'everything'),
      env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials }) as Record<string, string>,
      stderr: 'pipe',
    });
    let err = '';
    transport.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const bridged = new Client({ name: 'stdio-agent', version: '1' });
    await bridged.connect(transport);
    try {
      expect(
        JSON.stringify((await bridged.callTool({ name: 'echo', arguments: { message: 'before' } })).content),
      ).toContain('before');
      await everything.stop();
      everything = await startEverything(everything.port);
      const after = await bridged.callTool({ name: 'echo', arguments: { message: 'after the restart' } });
      expect(after.isError, JSON.stringify(after)).toBeFalsy();
      expect(JSON.stringify(after.content)).toContain('after the restart');
      expect((after._meta as any).platform.agin_id).toBe(aginId);
      expect(err).toContain('a new one is open');
    } finally {
      await bridged.close();
    }
  });

  /** `plaza mcp connect everything` as a child with raw pipes, logged in as the test agent. */
  async function spawnBridge() {
    const credentials = await storedCredential();
    const bridge = startChild(process.execPath, plazaArgs('mcp', 'connect', 'everything'), {
      env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => bridge.on('exit', (code) => resolve(code)));
    return { bridge, exited };
  }

  it('ends the stdio bridge when its client closes stdin, after answering what was asked', async () => {
    const { bridge, exited } = await spawnBridge();
    let out = '';
    bridge.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const lines = async (n: number) => {
      while (out.split('\n').filter(Boolean).length < n) await new Promise((r) => setTimeout(r, 20));
      return out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
    };
    const send = (message: object) => bridge.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
    });
    expect((await lines(1))[0]).toMatchObject({ id: 1, result: { protocolVersion: expect.any(String) } });
    // Initialized: the bridge now also holds the gateway's GET event stream open.
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    // Asked, then stdin closed at once: the answer still comes, then the bridge exits by itself.
    bridge.stdin.end();
    expect(await exited).toBe(0);
    expect((await lines(2))[1]).toMatchObject({ id: 2, result: { tools: expect.any(Array) } });
  });

  it('holds what a stdio client sends right behind its initialize until the gateway answered it, then passes it on in the session', async () => {
    const { bridge, exited } = await spawnBridge();
    let out = '';
    let err = '';
    bridge.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    bridge.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // One write, as a client that pipelines its handshake does: the gateway has no session id yet
    // when the notification and the request reach the bridge.
    const messages = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipelined', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    bridge.stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    await expect.poll(() => out.split('\n').filter(Boolean).length, { timeout: 10_000 }).toBe(2);
    const [first, second] = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(first).toMatchObject({ id: 1, result: { protocolVersion: expect.any(String) } });
    expect(second).toMatchObject({
      id: 2,
      result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'echo' })]) },
    });
    bridge.stdin.end();
    expect(await exited).toBe(0);
    expect(err).not.toMatch(/gateway/);
  });

  it('ends the stdio bridge quietly when its client has gone (stdout closed)', async () => {
    const { bridge, exited } = await spawnBridge();
    let err = '';
    bridge.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // The client closes its end of our stdout, then asks: the answer cannot be written (EPIPE).
    bridge.stdout.destroy();
    bridge.stdin.end(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gone', version: '1' } } })}\n`,
    );
    expect(await exited).toBe(0);
    expect(err).not.toMatch(/\n\s+at |Unhandled/);
  });

  it('refuses the agent once it is revoked', async () => {
    const agents = (await json('/api/agents')).body.data.agents as any[];
    const mine = agents.find((a) => a.agin_id === aginId);
    expect(mine).toBeDefined();
    expect((await json(`/api/agents/${mine.id}/revoke`, { method: 'POST' })).status).toBe(200);
    // The instance that revoked forgets the credential at once; another would within its 2 s cache.
    const listTools = async () => {
      const res = await fetch(`${plaza.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${agentToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      await res.body?.cancel();
      return res.status;
    };
    await expect.poll(listTools, { timeout: 5_000, interval: 100 }).toBe(401);
  });
});

describe('plaza mcp connect against a gateway that answers badly', () => {
  /**
   * A credential file logged in (once) with the first fake gateway, which answers the login's check
   * as Plaza's gateway does (405); each bridge is pointed at its own fake gateway with `--url`.
   */
  let credentialFile: Promise<string> | undefined;
  const loginOnce = (url: string) =>
    (credentialFile ??= (async () => {
      const credentials = join(mkdtempSync(join(tmpdir(), 'plaza-cred-')), 'agent.json');
      expect(
        (
          await runPlaza(['agents', 'login', '--token', `agt_${'a'.repeat(13)}_${'b'.repeat(40)}`, '--url', url], {
            PLAZA_CREDENTIALS_FILE: credentials,
          })
        ).code,
      ).toBe(0);
      return credentials;
    })());

  /**
   * A fake gateway that speaks just enough MCP (initialize, notifications) and a `plaza mcp
   * connect` bridge to it (`--url`), initialized. `call` answers every other request; `stream`
   * serves the GET stream of notifications. `env`: the bridge's settings.
   */
  async function bridgeToFakeGateway(
    provider: string,
    handlers: { call?: (res: ServerResponse) => void; stream?: (res: ServerResponse) => Promise<void> },
    env: Record<string, string> = {},
  ) {
    let initialized = false;
    const server = createServer(async (req, res) => {
      // The bridge's notification stream comes after its initialize; `plaza agents login`'s
      // credential check comes before, and gets what a gateway answers an agent it knows: 405.
      // (The bridge's own GET of /api/mcp/endpoints at start, checking the provider, is not one.)
      if (req.method === 'GET' && handlers.stream && initialized && req.url?.startsWith('/mcp/'))
        return void (await handlers.stream(res));
      if (req.method !== 'POST') return void res.writeHead(405).end();
      let text = '';
      for await (const part of req) text += part;
      const message = JSON.parse(text) as { id?: number; method: string };
      if (message.method === 'initialize') initialized = true;
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method !== 'initialize' && handlers.call) return handlers.call(res);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          result: {
            protocolVersion: '2025-06-18',
            capabilities: { tools: {} },
            serverInfo: { name: provider, version: '1' },
          },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const credentials = await loginOnce(url);
    const bridge = startChild(process.execPath, plazaArgs('mcp', 'connect', provider, '--url', url), {
      env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials, ...env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    bridge.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    bridge.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const send = (message: object) => bridge.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
    });
    await expect.poll(() => out.includes('"id":1'), { timeout: 10_000 }).toBe(true);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return {
      bridge,
      send,
      /** The messages the bridge wrote to its client so far. */
      received: () => out.split('\n').filter(Boolean),
      /** What the bridge wrote to stderr so far. */
      errors: () => err,
      /** The fake gateway stops listening (and drops its connections). */
      stopGateway() {
        server.closeAllConnections();
        server.close();
      },
      close() {
        bridge.kill();
        server.closeAllConnections();
        server.close();
      },
    };
  }

  it('answers a request whose event stream ended without a readable response, instead of leaving it open', async () => {
    // The SDK's transport only reports an event it cannot parse to onerror: the request stayed
    // unanswered until the client's own timeout.
    const fake = await bridgeToFakeGateway('bad', {
      call: (res) =>
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: message\ndata: {not json\n\n'),
    });
    try {
      fake.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } });
      await expect.poll(() => fake.received().length, { timeout: 10_000 }).toBe(2);
      const [, second] = fake.received().map((line) => JSON.parse(line));
      expect(second).toMatchObject({
        id: 2,
        error: { code: -32603, message: expect.stringMatching(/ended without a response/) },
      });
    } finally {
      fake.close();
    }
  });

  it('reopens the notification stream once the gateway is back, however long it was gone', async () => {
    // A Plaza restart (Ctrl-C drains for up to 10 s, then a start): the SDK's transport gives up
    // the GET stream after two failed reopenings, and the client got no notification again.
    let gets = 0;
    const fake = await bridgeToFakeGateway(
      'restarts',
      {
        async stream(res) {
          gets++;
          if (gets === 1) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end();
          if (gets <= 3) return void res.socket?.destroy();
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(
            `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'back' } })}\n\n`,
          );
        },
      },
      { PLAZA_MCP_CONNECT_RECONNECT_MS: '100' },
    );
    try {
      await expect
        .poll(() => fake.received().some((line) => line.includes('notifications/message')), {
          timeout: 15_000,
          interval: 200,
        })
        .toBe(true);
      expect(gets).toBe(4);
    } finally {
      fake.close();
    }
  }, 20_000);

  it('stops reopening a notification stream the gateway refuses (4xx), and says so', async () => {
    // Reopened for ever, it would ask every few seconds for a session that cannot come back.
    let gets = 0;
    const fake = await bridgeToFakeGateway(
      'refuses',
      {
        async stream(res) {
          gets++;
          // Open once, then the session is gone (an upstream that forgot it, or a revoked agent).
          if (gets === 1) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end();
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
        },
      },
      { PLAZA_MCP_CONNECT_RECONNECT_MS: '100' },
    );
    try {
      await expect
        .poll(() => fake.errors(), { timeout: 10_000 })
        .toMatch(/notification stream refused \(HTTP 404: the session is gone\); it opens again with the new session/);
      // Reopened after 100, 150, 225, 338 ms…: in 1.5 s a bridge that kept asking would have asked again several times.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(gets).toBe(2);
    } finally {
      fake.close();
    }
  }, 15_000);

  it('names the gateway it cannot reach and why, not just "fetch failed"', async () => {
    const fake = await bridgeToFakeGateway('gone', {});
    fake.stopGateway();
    fake.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    try {
      await expect.poll(() => fake.received().length, { timeout: 10_000 }).toBe(2);
      const second = JSON.parse(fake.received()[1]!);
      expect(second).toMatchObject({ id: 2, error: { code: -32603 } });
      expect(second.error.message).toMatch(
        /gateway request failed: cannot reach http:\/\/127\.0\.0\.1:\d+\/mcp\/p\/gone: .*ECONNREFUSED/,
      );
    } finally {
      fake.close();
    }
  });

  it('breaks off a notification stream whose event never ends, instead of holding it all', async () => {
    // The GET stream of server notifications has no total limit; one event without an end (no
    // empty line) would otherwise pile up in the bridge's memory for as long as it is sent.
    const MiB = 1024 * 1024;
    const EVENT_LIMIT = 4 * MiB;
    let streamed = 0;
    let streamClosed: (bytes: number) => void;
    const closed = new Promise<number>((resolve) => (streamClosed = resolve));
    const fake = await bridgeToFakeGateway(
      'endless',
      {
        async stream(res) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('event: message\ndata: ');
          const chunk = 'x'.repeat(MiB);
          res.on('close', () => streamClosed(streamed));
          while (!res.destroyed && streamed < 100 * MiB) {
            streamed += MiB;
            if (!res.write(chunk)) {
              // Drained or closed; both listeners go, or they pile up on the response.
              await new Promise<void>((resolve) => {
                const done = () => {
                  res.off('drain', done).off('close', done);
                  resolve();
                };
                res.on('drain', done).on('close', done);
              });
            }
          }
          res.end();
        },
      },
      { PLAZA_MCP_CONNECT_MAX_EVENT_BYTES: String(EVENT_LIMIT) },
    );
    try {
      // The bridge stops reading past its limit for one event (16 MiB unless set; 4 MiB here, to
      // send less); what the sockets buffer (as much as 16 MiB) comes on top.
      const bytes = await closed;
      expect(bytes).toBeGreaterThanOrEqual(EVENT_LIMIT);
      expect(bytes).toBeLessThan(EVENT_LIMIT + 16 * MiB);
      expect(fake.bridge.exitCode).toBeNull();
    } finally {
      fake.close();
    }
  }, 60_000);
});
