/**
 * Pins what `plaza mcp connect` answers a stdio client line by line, against a running Plaza and
 * server-everything: every line gets the answer JSON-RPC 2.0 gives it (a parse error, an invalid
 * request under the id it could read, a batch answered as one array) and a line on stderr says
 * what was not passed on; nothing is dropped in silence. A request the gateway refuses with an
 * HTTP status gets the gateway's own JSON-RPC answer under its id, or, when the body holds none,
 * a short error saying what the status means. At start, a provider that is not listed or not
 * online is warned about on stderr, and the bridge serves anyway (also while Plaza is down).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { saveCredential } from '../../src/cli/credential-store.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { startChild } from '../support/children.ts';
import { childEnv, freePort, plazaArgs, runPlaza } from '../support/cli.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

/** A `plaza mcp connect` child with raw pipes: what it wrote, line by line. */
interface Bridge {
  child: ChildProcessWithoutNullStreams;
  /** Writes `text` and a line end to the bridge's stdin. */
  line(text: string): void;
  send(message: object): void;
  /** The lines written to stdout so far (raw text). */
  out(): string[];
  /** What was written to stderr so far. */
  err(): string;
  /** Waits for `n` lines on stdout, then returns them parsed. */
  lines(n: number): Promise<unknown[]>;
  stop(): void;
}

/** `plaza mcp connect <args>` as a child with raw pipes, with the credential file (and environment) given. */
function spawnBridge(args: string[], credentials: string, env: Record<string, string> = {}): Bridge {
  const child = startChild(process.execPath, plazaArgs('mcp', 'connect', ...args), {
    env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials, ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const outLines = () => out.split('\n').filter(Boolean);
  return {
    child,
    line: (text) => child.stdin.write(`${text}\n`),
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    out: outLines,
    err: () => err,
    async lines(n) {
      await expect.poll(() => outLines().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(n);
      return outLines().map((text) => JSON.parse(text));
    },
    stop: () => child.kill(),
  };
}

/** `b` once its client has initialised its session at `protocolVersion` (and said so). */
async function initialisedBridge(b: Bridge, protocolVersion: string): Promise<Bridge> {
  b.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  expect((await b.lines(1))[0]).toMatchObject({ id: 1, result: { protocolVersion } });
  b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return b;
}

/**
 * An MCP provider over streamable HTTP that reads and writes numbers as written (as a Go or Rust
 * server does): its `echo` tool answers with the arguments it got, as structuredContent and as
 * text, in an event stream behind a notification carrying them too (or as JSON, with `json: 1`).
 */
async function startExactUpstream(): Promise<{ url: string; close(): void }> {
  const exact = JSON as unknown as { rawJSON(text: string): object };
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    let text = '';
    for await (const part of req) text += part;
    const message = JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' ? exact.rawJSON(context!.source!) : value,
    ) as { id?: unknown; method: string; params?: any };
    if (message.id === undefined) return void res.writeHead(202).end();
    const answer = (result: object) => JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
    // MCP 2026-07-28: a request carrying its protocol version in _meta needs the headers that say
    // the same (the SDK v2 server refuses it otherwise, -32020); this one answers what it saw.
    const envelope = message.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
    if (envelope !== undefined) {
      const seen = {
        version: req.headers['mcp-protocol-version'] ?? null,
        method: req.headers['mcp-method'] ?? null,
        name: req.headers['mcp-name'] ?? null,
      };
      const name = typeof message.params?.name === 'string' ? message.params.name : undefined;
      const nameHeader =
        name === undefined
          ? null
          : /^[\x20-\x7e]+$/.test(name)
            ? name
            : `=?base64?${Buffer.from(name).toString('base64')}?=`;
      if (seen.version !== envelope || seen.method !== message.method || seen.name !== nameHeader) {
        const error = { code: -32020, message: 'Bad Request: the request headers and body disagree', data: seen };
        return void res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error }));
      }
      if (message.method === 'server/discover')
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(answer({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete' }));
      // Plaza's probe lists tools in 2026-07-28 after a discover that offers it.
      if (message.method === 'tools/list')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          answer({
            tools: [{ name: 'echo', description: 'Echoes its arguments.', inputSchema: { type: 'object' } }],
            resultType: 'complete',
          }),
        );
      // A call with arguments is echoed as in the earlier revisions (Plaza's pool speaks 2026-07-28
      // to a provider that offers it); one without says what it saw.
      const callArgs = message.method === 'tools/call' ? message.params.arguments : undefined;
      if (callArgs !== undefined && Object.keys(callArgs).length > 0)
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          answer({
            content: [{ type: 'text', text: JSON.stringify(callArgs) }],
            structuredContent: callArgs,
            resultType: 'complete',
          }),
        );
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(answer({ content: [{ type: 'text', text: JSON.stringify(seen) }], resultType: 'complete' }));
    }
    if (message.method === 'initialize') {
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(
        answer({
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'exact', version: '1' },
        }),
      );
    }
    if (message.method === 'tools/list') {
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          answer({ tools: [{ name: 'echo', description: 'Echoes its arguments.', inputSchema: { type: 'object' } }] }),
        );
    }
    if (message.method !== 'tools/call')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(answer({}));
    const args = message.params.arguments;
    const result = answer({ content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: args });
    if (args.json?.rawJSON === '1') return void res.writeHead(200, { 'content-type': 'application/json' }).end(result);
    const note = JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: args },
    });
    res
      .writeHead(200, { 'content-type': 'text/event-stream' })
      .end(`event: message\ndata: ${note}\n\nevent: message\ndata: ${result}\n\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * An MCP provider over streamable HTTP with sessions it can be told to forget (as at a restart),
 * and that answers the initialize of `failClient`'s client HTTP 503 while `failures` is above 0
 * (Plaza's probe, another client, still gets its session). Its tool `slow` looks at the session
 * only after 800 ms (or `ms`).
 */
async function startForgetfulUpstream(failClient: string) {
  const sessions = new Set<string>();
  const state = { failures: 0, initializes: 0 };
  const server = createServer(async (req, res) => {
    const session = req.headers['mcp-session-id'] as string | undefined;
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    let text = '';
    for await (const part of req) text += part;
    const message = JSON.parse(text) as { id?: unknown; method: string; params?: any };
    const json = (status: number, body: object, headers: Record<string, string> = {}) =>
      void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (message.method === 'initialize') {
      if (message.params?.clientInfo?.name === failClient) {
        state.initializes++;
        if (state.failures > 0) {
          state.failures--;
          return json(503, {
            jsonrpc: '2.0',
            id: message.id,
            error: { code: -32603, message: 'Starting up; try again.' },
          });
        }
      }
      const id = `s-${Math.random().toString(36).slice(2)}`;
      sessions.add(id);
      return json(
        200,
        {
          jsonrpc: '2.0',
          id: message.id,
          result: {
            protocolVersion: '2025-06-18',
            capabilities: { tools: {} },
            serverInfo: { name: 'forgetful', version: '1' },
          },
        },
        { 'mcp-session-id': id },
      );
    }
    if (message.method === 'tools/call' && message.params?.name === 'slow')
      await new Promise((r) => setTimeout(r, Number(message.params.arguments?.ms ?? 800)));
    if (!session || !sessions.has(session))
      return json(404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method === 'tools/list')
      return json(200, {
        jsonrpc: '2.0',
        id: message.id,
        result: { tools: [{ name: 'hello', description: 'Says hello.', inputSchema: { type: 'object' } }] },
      });
    if (message.method === 'tools/call')
      return json(200, { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'hello' }] } });
    return json(200, { jsonrpc: '2.0', id: message.id, result: {} });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    state,
    /** Forgets every session, as a restarted provider does. */
    forget: () => sessions.clear(),
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('plaza mcp connect against a running Plaza', () => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let exactUpstream: Awaited<ReturnType<typeof startExactUpstream>>;
  let forgetful: Awaited<ReturnType<typeof startForgetfulUpstream>>;
  let credentials = '';
  let apiKey = '';
  const api = (path: string, body: object) =>
    fetch(`${plaza.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => (await res.json()) as any);

  beforeAll(async () => {
    [plaza, everything, exactUpstream] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1' } }),
      startEverything(),
      startExactUpstream(),
    ]);
    forgetful = await startForgetfulUpstream('renewing-client');
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'bridge@example.com',
      })
    ).apiKey;
    for (const [provider, url] of [
      ['everything', everything.url],
      ['exact', exactUpstream.url],
      ['forgetful', forgetful.url],
    ]) {
      const listed = await api('/api/mcp/listings', {
        provider,
        url,
        registered_by: 'ops@example.com',
        agin_support: true,
        summary: 'Reference MCP server.',
      });
      let status = 'registered';
      for (let i = 0; i < 200 && status === 'registered'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = ((await (await fetch(`${plaza.url}/api/mcp/endpoints/${listed.id}`)).json()) as any).status;
      }
      expect(status, provider).toBe('healthy');
    }
    const agent = await api('/api/agents', { display_name: 'Bridge agent' });
    credentials = join(mkdtempSync(join(tmpdir(), 'plaza-cred-')), 'agent.json');
    expect(
      (
        await runPlaza(['agents', 'login', '--token', agent.data.token, '--url', plaza.url], {
          PLAZA_CREDENTIALS_FILE: credentials,
        })
      ).code,
    ).toBe(0);
  }, 60_000);
  afterAll(async () => {
    exactUpstream?.close();
    forgetful?.close();
    await everything?.stop();
    await plaza?.close();
  });

  const bridge = (args: string[], env: Record<string, string> = {}) => spawnBridge(args, credentials, env);
  const initialised = (protocolVersion: string, args = ['everything']) =>
    initialisedBridge(bridge(args), protocolVersion);

  it('answers every line where JSON-RPC says to, and says on stderr what it did not pass on', async () => {
    const b = await initialised('2025-06-18');
    try {
      b.line('this is not JSON');
      b.line('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}');
      b.line('{"jsonrpc":"2.0","id":null,"method":"ping"}');
      b.line('{"jsonrpc":"2.0","id":5,"method":"ping","extra":1}');
      b.line('[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"tools/list"}]');
      b.line('[]');
      b.line('{"jsonrpc":"2.0","id":"last","method":"ping"}');
      const answers = (await b.lines(8)).slice(1);
      expect(answers).toHaveLength(7);
      const byId = (id: unknown) => answers.filter((a: any) => !Array.isArray(a) && a.id === id);
      // Not JSON, an id null, an empty batch: under id null, as JSON-RPC has it.
      expect(byId(null)).toEqual(
        expect.arrayContaining([
          { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/not JSON/) } },
          { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/never null/) } },
          { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/empty batch/) } },
        ]),
      );
      // The id past 2^53 is answered under the digits the client wrote, not a rounded one.
      const big = b.out().find((text) => text.includes('9007199254740993'));
      expect(big).toMatch(
        /^\{"jsonrpc":"2\.0","id":9007199254740993,"error":\{"code":-32600,"message":"[^"]*past 2\^53 - 1/,
      );
      // An unknown member is left off; the ping itself is answered by the provider.
      expect(byId(5)).toEqual([{ jsonrpc: '2.0', id: 5, result: {} }]);
      expect(byId('last')).toEqual([{ jsonrpc: '2.0', id: 'last', result: {} }]);
      // A batch in a 2025-06-18 session: each request refused, in one array.
      const batch = answers.find(Array.isArray) as any[];
      expect(batch.map((a) => [a.id, a.error.code])).toEqual([
        [3, -32600],
        [4, -32600],
      ]);
      expect(batch[0].error.message).toMatch(/batches are not part of MCP 2025-06-18/);
      expect(b.err().match(/^plaza: not passed on to the gateway/gm)).toHaveLength(5);
      expect(b.err()).toMatch(/passed on without the member\(s\) JSON-RPC 2\.0 does not name: "extra"/);
    } finally {
      b.stop();
    }
  });

  it.each([[['exact']], [['--all']]])(
    'passes integers past 2^53 through as written, both ways, in an event stream and in JSON (mcp connect %s)',
    async (args) => {
      const b = await initialised('2025-06-18', args);
      const tool = args[0] === '--all' ? 'exact__echo' : 'echo';
      try {
        const big =
          '{"n":9007199254740993,"neg":-12345678901234567890,"list":[18446744073709551615,-9223372036854775809]';
        b.line(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"${tool}","arguments":${big}}}}`);
        b.line(
          `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"${tool}","arguments":${big},"json":1}}}`,
        );
        // An id past 2^53 is refused, as the gateway refuses it, under the digits as written.
        b.line(
          `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"${tool}","arguments":${big}}}}`,
        );
        await b.lines(args[0] === 'exact' ? 5 : 4);
        const line = (pattern: RegExp) => b.out().find((text) => pattern.test(text));
        // The provider's notification (on /mcp/p, which relays it) and both results carry the digits the client wrote.
        if (args[0] === 'exact') expect(line(/notifications\/message/)).toContain(`"data":${big}}`);
        for (const id of [2, 3]) {
          const answer = line(new RegExp(`^\\{"jsonrpc":"2\\.0","id":${id},`))!;
          expect(answer, `id ${id}`).toContain(`"structuredContent":${big}`);
          expect(answer).toContain(`"text":${JSON.stringify(big).slice(0, -1)}`);
        }
        expect(line(/"id":9007199254740993,/)).toMatch(
          /^\{"jsonrpc":"2\.0","id":9007199254740993,"error":\{"code":-32600,"message":"[^"]*past 2\^53 - 1/,
        );
      } finally {
        b.stop();
      }
    },
  );

  /** A bridge to the forgetful provider, initialised by the client it fails the initialize of. */
  async function forgetfulBridge(env: Record<string, string> = {}): Promise<Bridge> {
    const b = bridge(['forgetful'], env);
    b.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'renewing-client', version: '1' },
      },
    });
    expect((await b.lines(1))[0]).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
    b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    b.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hello', arguments: {} } });
    expect((await b.lines(2))[1]).toMatchObject({ id: 2, result: { content: [{ text: 'hello' }] } });
    return b;
  }

  it('sends a request that carries its protocol version in _meta (MCP 2026-07-28) with the headers that version asks of HTTP', async () => {
    const b = bridge(['exact']);
    try {
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      b.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } });
      expect((await b.lines(1))[0]).toMatchObject({ id: 1, result: { supportedVersions: ['2026-07-28'] } });
      b.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: meta } });
      b.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'écho ✓', arguments: {}, _meta: meta } });
      const answers = (await b.lines(3)).slice(1) as Array<{
        id: number;
        result: { content: Array<{ text: string }>; _meta: { platform: { call_id: string } } };
      }>;
      const seen = (id: number) => JSON.parse(answers.find((a) => a.id === id)!.result.content[0]!.text);
      expect(seen(2)).toEqual({ version: '2026-07-28', method: 'tools/call', name: 'echo' });
      expect(seen(3)).toEqual({
        version: '2026-07-28',
        method: 'tools/call',
        name: `=?base64?${Buffer.from('écho ✓').toString('base64')}?=`,
      });
      expect(answers.every((a) => a.result._meta.platform.call_id.startsWith('call_'))).toBe(true);
      expect(b.err()).not.toContain('HTTP 400');
    } finally {
      b.stop();
    }
  });

  it('answers a request whose session could not be renewed with an error saying so, and renews with the next request', async () => {
    const b = await forgetfulBridge();
    try {
      forgetful.forget();
      forgetful.state.failures = 1;
      const before = forgetful.state.initializes;
      b.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'hello', arguments: {} } });
      const [failed] = (await b.lines(3)).slice(2) as any[];
      expect(failed).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32603 } });
      expect(failed.error.message).toMatch(
        /^the gateway session had ended \(HTTP 404[^)]*\) and a new one could not be opened: .*The next request tries again\.$/,
      );
      expect(b.err()).toMatch(/a new one could not be opened .*; the next message tries again/);
      expect(forgetful.state.initializes).toBe(before + 1);
      // The next request renews the session, and is answered in it; so is the one after.
      b.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'hello', arguments: {} } });
      b.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      const answers = (await b.lines(5)).slice(3) as any[];
      const renewed = answers.find((a) => a.id === 4);
      const listed = answers.find((a) => a.id === 5);
      expect(renewed).toMatchObject({ id: 4, result: { content: [{ text: 'hello' }] } });
      expect(listed).toMatchObject({ id: 5, result: { tools: [{ name: 'hello' }] } });
      expect(forgetful.state.initializes).toBe(before + 2);
      expect(b.err()).toMatch(/a new one is open/);
    } finally {
      b.stop();
    }
  });

  it('sends a request whose 404 came after the new session opened again in it, without opening another or cutting it off', async () => {
    const b = await forgetfulBridge();
    try {
      const before = forgetful.state.initializes;
      // In flight in the old session while the next request renews it.
      b.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow', arguments: {} } });
      await new Promise((r) => setTimeout(r, 200));
      forgetful.forget();
      b.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
      const answers = (await b.lines(4)).slice(2) as any[];
      expect(answers.find((a) => a.id === 4)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
      expect(answers.find((a) => a.id === 3)).toMatchObject({ id: 3, result: { content: [{ text: 'hello' }] } });
      expect(forgetful.state.initializes).toBe(before + 1);
    } finally {
      b.stop();
    }
  });

  it('answers a request still unanswered PLAZA_MCP_CONNECT_DRAIN_MS after its client closed stdin, then ends', async () => {
    // 3 s here instead of the default 10 s: time enough for the ping, not for the 15 s call.
    const b = await forgetfulBridge({ PLAZA_MCP_CONNECT_DRAIN_MS: '3000' });
    const exited = new Promise<number | null>((resolve) => b.child.on('exit', (code) => resolve(code)));
    try {
      b.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow', arguments: { ms: 15_000 } } });
      b.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
      b.child.stdin.end();
      expect(await exited).toBe(0);
      const answers = (await b.lines(4)).slice(2) as any[];
      expect(answers.find((a) => a.id === 4)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
      expect(answers.find((a) => a.id === 3)).toEqual({
        jsonrpc: '2.0',
        id: 3,
        error: { code: -32603, message: expect.stringMatching(/closed stdin.*not answered within 3 s/) },
      });
    } finally {
      b.stop();
    }
  }, 30_000);

  it('refuses a bridge setting that is not a whole number in range, naming it, with exit code 2', async () => {
    const [word, tooSmall] = await Promise.all([
      runPlaza(['mcp', 'connect', 'everything'], {
        PLAZA_CREDENTIALS_FILE: credentials,
        PLAZA_MCP_CONNECT_DRAIN_MS: 'soon',
      }),
      runPlaza(['mcp', 'connect', 'everything'], {
        PLAZA_CREDENTIALS_FILE: credentials,
        PLAZA_MCP_CONNECT_MAX_EVENT_BYTES: '10',
      }),
    ]);
    expect(word.code).toBe(2);
    expect(word.stderr.trim()).toBe(
      'plaza: PLAZA_MCP_CONNECT_DRAIN_MS must be a whole number from 0 to 3600000 (got "soon")',
    );
    expect(tooSmall.code).toBe(2);
    expect(tooSmall.stderr.trim()).toBe(
      'plaza: PLAZA_MCP_CONNECT_MAX_EVENT_BYTES must be a whole number from 1024 to 1073741824 (got "10")',
    );
  });

  it('answers every request with an error saying so while no new session can be opened, trying again each time', async () => {
    const b = await forgetfulBridge();
    try {
      forgetful.forget();
      forgetful.state.failures = Number.POSITIVE_INFINITY;
      const before = forgetful.state.initializes;
      for (const id of [3, 4]) {
        b.send({ jsonrpc: '2.0', id, method: 'ping' });
        const answer = (await b.lines(id))[id - 1] as any;
        expect(answer).toMatchObject({
          jsonrpc: '2.0',
          id,
          error: {
            code: -32603,
            message: expect.stringMatching(
              /^the gateway session had ended \(HTTP 404[^)]*\) and a new one could not be opened: /,
            ),
          },
        });
      }
      // Each request tried a new session: none went out without one.
      expect(forgetful.state.initializes).toBe(before + 2);
      expect(b.child.exitCode).toBeNull();
    } finally {
      forgetful.state.failures = 0;
      b.stop();
    }
  });

  it.each([[['everything']], [['--all']]])(
    'passes a batch on as one when the session speaks 2025-03-26, and answers it as one array (mcp connect %s)',
    async (args) => {
      const b = await initialised('2025-03-26', args);
      try {
        b.line(
          JSON.stringify([
            { jsonrpc: '2.0', id: 3, method: 'ping' },
            { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
            { jsonrpc: '2.0', id: null, method: 'ping' },
            { jsonrpc: '2.0', id: 4, method: 'tools/list' },
          ]),
        );
        const [, answer] = (await b.lines(2)) as [unknown, any[]];
        expect(Array.isArray(answer)).toBe(true);
        const byId = new Map(answer.map((a) => [a.id, a]));
        expect(byId.get(3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
        expect(byId.get(4).result.tools).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ name: args[0] === '--all' ? 'everything__echo' : 'echo' }),
          ]),
        );
        expect(byId.get(null)).toMatchObject({ error: { code: -32600 } });
        expect(answer).toHaveLength(3);
        await new Promise((r) => setTimeout(r, 300));
        expect(b.out()).toHaveLength(2);
      } finally {
        b.stop();
      }
    },
  );

  it("answers with the gateway's own JSON-RPC answer to a request it refuses (HTTP 4xx), under the request's id", async () => {
    // An unknown provider: the gateway answers the initialize 404 with a JSON-RPC error.
    const unknown = bridge(['nosuch']);
    try {
      unknown.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      expect((await unknown.lines(1))[0]).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32600, message: 'No online connector for provider "nosuch".' },
      });
    } finally {
      unknown.stop();
    }
    // A call the gateway refuses before anything goes upstream: 400, under the call's id.
    const b = await initialised('2025-06-18');
    try {
      b.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: '', arguments: {} } });
      expect((await b.lines(2))[1]).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32602, message: 'tools/call params.name must be 1 to 300 characters.' },
      });
      expect(b.err()).toMatch(/^plaza: gateway: HTTP 400: tools\/call params\.name must be 1 to 300 characters\.$/m);
    } finally {
      b.stop();
    }
  });

  it("gives a revoked agent the gateway's 401 answer, and says on stderr how to store a new credential", async () => {
    const agent = await api('/api/agents', { display_name: 'Soon revoked' });
    const file = join(mkdtempSync(join(tmpdir(), 'plaza-cred-')), 'agent.json');
    expect(
      (
        await runPlaza(['agents', 'login', '--token', agent.data.token, '--url', plaza.url], {
          PLAZA_CREDENTIALS_FILE: file,
        })
      ).code,
    ).toBe(0);
    const b = await initialisedBridge(spawnBridge(['everything'], file), '2025-06-18');
    try {
      expect((await api(`/api/agents/${agent.data.agent.id}/revoke`, {})).success).toBe(true);
      // The gateway keeps a checked credential for up to 2 s (the instance that revoked it, none):
      // the bridge is asked once the gateway refuses the agent.
      const gatewayStatus = async () => {
        const res = await fetch(`${plaza.url}/mcp`, {
          headers: { authorization: `Bearer ${agent.data.token}`, accept: 'text/event-stream' },
        });
        await res.body?.cancel();
        return res.status;
      };
      await expect.poll(gatewayStatus, { timeout: 5_000, interval: 100 }).toBe(401);
      b.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect((await b.lines(2))[1]).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32001, message: 'Invalid or revoked agent credential.' },
      });
      expect(b.err()).toMatch(
        /refused the agent credential \(401: Invalid or revoked agent credential\.\): run `plaza agents login --token <agent token>`/,
      );
    } finally {
      b.stop();
    }
  });
  it.each([
    [
      'a provider nobody listed',
      ['nosuch'],
      /^plaza: warning: no provider "nosuch" is listed on http:\/\/127\.0\.0\.1:\d+: every request through this bridge fails until one is/m,
    ],
    [
      '--all with a credential for a provider nobody listed',
      ['--all', '--upstream-token-env', 'NOSUCH_TOKEN', '--upstream-provider', 'nosuch'],
      /^plaza: warning: --upstream-provider nosuch: no provider "nosuch" is listed on http:\/\/127\.0\.0\.1:\d+: the credential in NOSUCH_TOKEN goes to no provider until one is/m,
    ],
    [
      'a provider listed but not online',
      ['offline'],
      /^plaza: warning: provider "offline" is listed on http:\/\/127\.0\.0\.1:\d+ but not online \((registered|unreachable)\): every request through this bridge fails until Plaza's probe finds it up/m,
    ],
  ])('warns on stderr at start about %s, and serves anyway', async (_what, args, warning) => {
    // Listed where nothing listens: registered until probed, then unreachable; never online.
    if (args[0] === 'offline')
      await api('/api/mcp/listings', {
        provider: 'offline',
        url: `http://127.0.0.1:${await freePort()}/mcp`,
        registered_by: 'ops@example.com',
        agin_support: false,
        summary: 'Listed, never up.',
      });
    const b = bridge(args, { NOSUCH_TOKEN: 'secret' });
    try {
      await expect.poll(() => b.err(), { timeout: 10_000 }).toMatch(warning);
      // Still a bridge: the client's initialize is answered (by the gateway's refusal, or its result).
      b.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      expect((await b.lines(1))[0]).toMatchObject({ id: 1 });
      expect(b.child.exitCode).toBeNull();
    } finally {
      b.stop();
    }
  });

  it.each([
    ['a provider that is online', 'everything'],
    ["Plaza's own provider, which is never listed", 'platform'],
  ])('says nothing at start about %s', async (_what, provider) => {
    const b = bridge([provider]);
    try {
      // The check of an unlisted name takes longest (it loads the reserved names): well within this.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(b.err()).toBe('');
    } finally {
      b.stop();
    }
  });

  it('starts when Plaza cannot be reached, saying it could not check the provider', async () => {
    const b = bridge(['everything', '--url', `http://127.0.0.1:${await freePort()}`]);
    try {
      await expect
        .poll(() => b.err(), { timeout: 10_000 })
        .toMatch(
          /^plaza: could not check provider "everything" with http:\/\/127\.0\.0\.1:\d+ \(cannot reach .*ECONNREFUSED.*\); starting anyway$/m,
        );
      b.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      expect((await b.lines(1))[0]).toMatchObject({
        id: 1,
        error: { code: -32603, message: expect.stringMatching(/cannot reach/) },
      });
      expect(b.child.exitCode).toBeNull();
    } finally {
      b.stop();
    }
  });
});

describe('plaza mcp connect against a gateway that refuses with a status', () => {
  /**
   * A fake gateway that answers initialize and notifications as the gateway does, and every other
   * request with `status` and the body `body(id)` makes; a bridge to it, initialised.
   */
  async function refusingGateway(status: number, body: (id: unknown) => string, headers: Record<string, string> = {}) {
    let requests = 0;
    /** The MCP-Protocol-Version of every POST but the initializes, in order. */
    const versions: Array<string | undefined> = [];
    const server = createServer(async (req, res) => {
      if (req.method !== 'POST') return void res.writeHead(req.method === 'GET' ? 405 : 200).end();
      let text = '';
      for await (const part of req) text += part;
      const message = JSON.parse(text) as { id?: unknown; method: string };
      if (message.method !== 'initialize') versions.push(req.headers['mcp-protocol-version'] as string | undefined);
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method === 'initialize') {
        return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${requests}` }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'fake', version: '1' } },
          }),
        );
      }
      requests++;
      res.writeHead(status, headers).end(body(message.id));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const file = join(mkdtempSync(join(tmpdir(), 'plaza-cred-')), 'agent.json');
    saveCredential(file, { url, token: `agt_${'a'.repeat(13)}_${'b'.repeat(40)}` });
    const b = await initialisedBridge(spawnBridge(['fake'], file), '2025-06-18');
    return {
      b,
      requests: () => requests,
      versions,
      close() {
        b.stop();
        server.closeAllConnections();
        server.close();
      },
    };
  }

  const json = (value: object) => JSON.stringify(value);
  const isError = { content: [{ type: 'text', text: 'Call failed: the upstream answered HTTP 400.' }], isError: true };

  it.each([
    [
      'a 400 with an isError result',
      400,
      (id: unknown) => json({ jsonrpc: '2.0', id, result: isError }),
      {},
      { result: isError },
    ],
    [
      'a 401 under id null',
      401,
      () =>
        json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Invalid or revoked agent credential.' } }),
      {},
      { error: { code: -32001, message: 'Invalid or revoked agent credential.' } },
    ],
    [
      'a 429 in JSON-RPC',
      429,
      () => json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Too many calls; retry in 3 s.' } }),
      { 'retry-after': '3' },
      { error: { code: -32000, message: 'Too many calls; retry in 3 s.' } },
    ],
    [
      'a 503 in JSON-RPC',
      503,
      () =>
        json({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32603, message: 'Plaza cannot reach its database right now.' },
        }),
      {},
      { error: { code: -32603, message: 'Plaza cannot reach its database right now.' } },
    ],
  ])("passes on %s unwrapped, under the request's id", async (_what, status, body, headers, expected) => {
    const fake = await refusingGateway(status, body, { 'content-type': 'application/json', ...headers });
    try {
      fake.b.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } });
      expect((await fake.b.lines(2))[1]).toEqual({ jsonrpc: '2.0', id: 2, ...expected });
    } finally {
      fake.close();
    }
  });

  it.each([
    [
      'a 401 in plain text',
      401,
      {},
      /^the gateway refused the agent credential \(401\): run `plaza agents login --token <agent token>` to store a valid one$/,
    ],
    [
      "a proxy's 429 page",
      429,
      { 'retry-after': '7', 'content-type': 'text/html' },
      /^the gateway, or a proxy in front of it, limits this agent's rate \(429\): retry in 7 s$/,
    ],
    ['a 503 in plain text', 503, {}, /^the gateway is unavailable \(503\): retry in a moment$/],
  ])(
    'answers %s with a short error of its own, saying the status and what it means',
    async (_what, status, headers, message) => {
      const fake = await refusingGateway(status, () => '<html>Service text</html>', headers);
      try {
        fake.b.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
        const answer = (await fake.b.lines(2))[1] as any;
        expect(answer).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32603 } });
        expect(answer.error.message).toMatch(message);
      } finally {
        fake.close();
      }
    },
  );

  it("tries a new session once on a 404, then answers with the gateway's 404", async () => {
    const fake = await refusingGateway(
      404,
      () =>
        json({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'Unknown or expired session; initialize a new one.' },
        }),
      { 'content-type': 'application/json' },
    );
    try {
      fake.b.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      expect((await fake.b.lines(2))[1]).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32001, message: 'Unknown or expired session; initialize a new one.' },
      });
      // Once in the old session, once again in the new one.
      expect(fake.requests()).toBe(2);
      expect(fake.b.err()).toMatch(/a new one is open/);
      // Every request after an initialize names the version it agreed on, in the new session too.
      expect(fake.versions.length).toBeGreaterThanOrEqual(4);
      expect(new Set(fake.versions)).toEqual(new Set(['2025-06-18']));
    } finally {
      fake.close();
    }
  });
});
