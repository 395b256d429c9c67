/**
 * Pins what `plaza mcp connect` answers a stdio client line by line, against a running Plaza and
 * server-everything: every line gets the answer JSON-RPC 2.0 gives it (a parse error, an invalid
 * request under the id it could read, a batch answered as one array) and a line on stderr says
 * what was not passed on; nothing is dropped in silence.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { childEnv, PLAZA_BIN, runPlaza } from '../support/cli.ts';
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

describe('plaza mcp connect, line by line', () => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let credentials = '';

  beforeAll(async () => {
    [plaza, everything] = await Promise.all([startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1' } }), startEverything()]);
    const apiKey = (await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({ email: 'bridge@example.com' })).apiKey;
    const api = (path: string, body: object) =>
      fetch(`${plaza.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (res) => (await res.json()) as any);
    const listed = await api('/api/mcp/listings', { provider: 'everything', url: everything.url, registered_by: 'ops@example.com', agin_support: true, summary: 'Reference MCP server.' });
    let status = 'registered';
    for (let i = 0; i < 200 && status === 'registered'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = ((await (await fetch(`${plaza.url}/api/mcp/endpoints/${listed.id}`)).json()) as any).status;
    }
    expect(status).toBe('healthy');
    const agent = await api('/api/agents', { display_name: 'Bridge agent' });
    credentials = join(mkdtempSync(join(tmpdir(), 'plaza-cred-')), 'agent.json');
    expect((await runPlaza(['agents', 'login', '--token', agent.data.token, '--url', plaza.url], { PLAZA_CREDENTIALS_FILE: credentials })).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await everything?.stop();
    await plaza?.close();
  });

  function bridge(args: string[]): Bridge {
    const child = spawn(process.execPath, [PLAZA_BIN, 'mcp', 'connect', ...args], { env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials }), stdio: ['pipe', 'pipe', 'pipe'] });
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

  /** A bridge (to everything by default) whose client has initialised its session at `protocolVersion`. */
  async function initialised(protocolVersion: string, args = ['everything']): Promise<Bridge> {
    const b = bridge(args);
    b.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect((await b.lines(1))[0]).toMatchObject({ id: 1, result: { protocolVersion } });
    b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return b;
  }

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
      expect(big).toMatch(/^\{"jsonrpc":"2\.0","id":9007199254740993,"error":\{"code":-32600,"message":"[^"]*past 2\^53 - 1/);
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

  it.each([[['everything']], [['--all']]])('passes a batch on as one when the session speaks 2025-03-26, and answers it as one array (mcp connect %s)', async (args) => {
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
      expect(byId.get(4).result.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: args[0] === '--all' ? 'everything__echo' : 'echo' })]));
      expect(byId.get(null)).toMatchObject({ error: { code: -32600 } });
      expect(answer).toHaveLength(3);
      await new Promise((r) => setTimeout(r, 300));
      expect(b.out()).toHaveLength(2);
    } finally {
      b.stop();
    }
  });
});
