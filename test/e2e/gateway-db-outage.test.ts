/**
 * PostgreSQL goes away under load: concurrent agents call server-everything through
 * `/mcp/p/everything` and `/mcp` while Plaza's database refuses connections (its backends are
 * terminated and new ones refused, as an outage or failover does), then comes back. Every answer
 * is either a result whose receipt exists once the spool has been replayed, or a clear refusal
 * (JSON, never an HTML page, never a bare 500); no receipt is lost or duplicated; the process keeps
 * serving. Needs a real PostgreSQL (TEST_DATABASE_URL).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { accountApi, listHealthy } from '../support/gateway-load.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const ACCEPT = 'application/json, text/event-stream';

/** What one tools/call came back as. */
interface Answer {
  path: 'passthrough' | 'aggregate';
  phase: 'before' | 'outage' | 'after';
  status: number;
  contentType: string;
  /** `result` of the call's JSON-RPC response, when there was one. */
  result?: { isError?: boolean; content?: { text?: string }[]; _meta?: { platform?: { call_id?: string } } };
  /** `error` of a JSON-RPC error response. */
  error?: { code: number; message: string };
  body: string;
}

/** The JSON-RPC response with `id` out of a JSON or SSE body. */
function responseOf(body: string, contentType: string, id: number): { result?: any; error?: any } | undefined {
  const messages: unknown[] = [];
  if (contentType.startsWith('text/event-stream')) {
    for (const line of body.split('\n')) if (line.startsWith('data:')) messages.push(JSON.parse(line.slice(5)));
  } else if (contentType.startsWith('application/json')) {
    const parsed = JSON.parse(body) as unknown;
    messages.push(...(Array.isArray(parsed) ? parsed : [parsed]));
  }
  return messages.find((m) => (m as { id?: unknown }).id === id || (m as { id?: unknown }).id === null) as
    { result?: any; error?: any } | undefined;
}

/**
 * Real time, except while held: the /mcp outage cases below hold it from their warm-up call to
 * their last outage call, so that what the warm-up cached (the agent's credential, its policy, the
 * connector: 2 s each) is still known however slowly a loaded machine runs those few calls.
 */
const clock = {
  held: undefined as number | undefined,
  now(): number {
    return this.held ?? Date.now();
  },
};

describe.runIf(BACKENDS.includes('postgres'))('gateway while PostgreSQL goes down mid-load', () => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let admin: pg.Client;
  let dbName = '';
  let token = '';
  let aginId = '';

  beforeAll(async () => {
    [plaza, everything] = await Promise.all([
      startTestPlaza('postgres', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'warn' }, clock }),
      startEverything(),
    ]);
    admin = new pg.Client({ connectionString: process.env['TEST_DATABASE_URL'] });
    await admin.connect();
    const [row] = await plaza.db.prisma.$queryRawUnsafe<{ name: string }[]>('SELECT current_database() AS name');
    dbName = row!.name;
    const apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'outage@example.com',
      })
    ).apiKey;
    const api = accountApi(plaza.url, apiKey);
    await listHealthy(plaza.url, 'everything', everything.url);
    const created = await api('/api/agents', { display_name: 'Outage agent' });
    token = created.data.token;
    aginId = created.data.agent.agin_id;
  }, 90_000);

  afterAll(async () => {
    if (admin) {
      await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
    }
    await everything?.stop();
    await plaza?.close();
  });

  async function post(
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; contentType: string; text: string; headers: Headers }> {
    const res = await fetch(`${plaza.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: ACCEPT, ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      text: await res.text(),
      headers: res.headers,
    };
  }

  /** Opens a passthrough session (sealed by Plaza) to server-everything. */
  async function openSession(): Promise<string> {
    const init = await post('/mcp/p/everything', {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'outage-agent', version: '1' } },
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id')!;
    const version = responseOf(init.text, init.contentType, 0)!.result.protocolVersion as string;
    await post(
      '/mcp/p/everything',
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-session-id': session, 'mcp-protocol-version': version },
    );
    return session;
  }

  it('answers every call with a receipted result or a clear refusal, loses no receipt, and keeps serving', async () => {
    const sessions = await Promise.all(Array.from({ length: 4 }, () => openSession()));
    let phase: Answer['phase'] = 'before';
    let running = true;
    const answers: Answer[] = [];
    let nextId = 1;

    async function call(path: Answer['path'], session?: string): Promise<void> {
      const id = nextId++;
      const at = phase;
      const target = path === 'passthrough' ? '/mcp/p/everything' : '/mcp';
      const name = path === 'passthrough' ? 'echo' : 'everything__echo';
      try {
        const res = await post(
          target,
          { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { message: `m${id}` } } },
          session
            ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }
            : { 'mcp-protocol-version': '2025-06-18' },
        );
        let response: ReturnType<typeof responseOf>;
        try {
          response = responseOf(res.text, res.contentType, id);
        } catch {
          response = undefined;
        }
        answers.push({
          path,
          phase: at,
          status: res.status,
          contentType: res.contentType,
          result: response?.result,
          error: response?.error,
          body: res.text.slice(0, 500),
        });
      } catch (error) {
        answers.push({ path, phase: at, status: 0, contentType: '', body: String(error) });
      }
    }

    const workers = [
      ...sessions.map(async (session) => {
        while (running) await call('passthrough', session);
      }),
      ...Array.from({ length: 4 }, async () => {
        while (running) await call('aggregate');
      }),
    ];

    // Each phase runs until what is checked of it below has happened (more than 4 answers before
    // the outage, a result on each path before and after it), not for a fixed time.
    const succeeded = (path: Answer['path'], p: Answer['phase']) =>
      answers.some((a) => a.path === path && a.phase === p && a.status === 200 && a.result && !a.result.isError);
    const bothPaths = (p: Answer['phase']) => succeeded('passthrough', p) && succeeded('aggregate', p);
    await expect
      .poll(() => answers.filter((a) => a.phase === 'before').length > 4 && bothPaths('before'), {
        timeout: 20_000,
        interval: 50,
      })
      .toBe(true);
    // The outage: running backends are killed and new connections refused. It lasts longer than
    // the 2 s agent-credential cache, so authentication meets the dead database too.
    phase = 'outage';
    await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [dbName],
    );
    await new Promise((r) => setTimeout(r, 3_500));
    await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`);
    phase = 'after';
    await expect.poll(() => bothPaths('after'), { timeout: 20_000, interval: 50 }).toBe(true);
    running = false;
    await Promise.all(workers);

    const byPhase = (p: Answer['phase']) => answers.filter((a) => a.phase === p);
    expect(byPhase('before').length).toBeGreaterThan(4);
    expect(byPhase('outage').length).toBeGreaterThan(4);

    // Every answer is an MCP answer or a clear refusal: never HTML, never a bare 5xx, never a dropped connection.
    for (const a of answers) {
      expect(a.status, a.body).not.toBe(0);
      expect(a.contentType, a.body).toMatch(/^(application\/json|text\/event-stream)/);
      expect([200, 503], a.body).toContain(a.status);
      if (a.status === 503) expect(a.error?.message ?? '', a.body).toMatch(/database/i);
      // A 200 carries the call's JSON-RPC response: a result or an error that says what failed.
      if (a.status === 200) expect(a.result ?? a.error, a.body).toBeDefined();
      if (a.error) expect(a.error.message.length).toBeGreaterThan(10);
    }
    const successes = answers.filter((a) => a.status === 200 && a.result && !a.result.isError);
    const successIds = successes.map((a) => a.result!._meta!.platform!.call_id!);
    for (const id of successIds) expect(id).toMatch(/^call_/);
    // Both paths worked before and after, and the database being down did not stop the gateway from answering.
    for (const path of ['passthrough', 'aggregate'] as const) {
      expect(successes.some((a) => a.path === path && a.phase === 'before')).toBe(true);
      expect(successes.some((a) => a.path === path && a.phase === 'after')).toBe(true);
    }

    // After recovery the spool is replayed: every successful call has exactly one receipt.
    const receiptIds = async () =>
      (
        await plaza.db.prisma.$queryRawUnsafe<{ call_id: string }[]>(
          `SELECT "call_id" FROM "receipts" WHERE "agin_id" = $1`,
          aginId,
        )
      ).map((r) => r.call_id);
    await expect
      .poll(
        async () => {
          const have = new Set(await receiptIds());
          return successIds.filter((id) => !have.has(id)).length;
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe(0);
    const stored = await receiptIds();
    expect(new Set(stored).size).toBe(stored.length);
    // No receipt for a call nobody was answered about: every stored receipt names a call id some answer carried.
    const answeredIds = new Set(answers.map((a) => a.result?._meta?.platform?.call_id).filter(Boolean));
    for (const id of stored) expect(answeredIds.has(id)).toBe(true);

    // The process is alive and serving: health, and a fresh call with its receipt.
    expect((await fetch(`${plaza.url}/health`)).status).toBe(200);
    const fresh = await post('/mcp', {
      jsonrpc: '2.0',
      id: 999_999,
      method: 'tools/call',
      params: { name: 'everything__echo', arguments: { message: 'after' } },
    });
    const freshId = responseOf(fresh.text, fresh.contentType, 999_999)?.result?._meta?.platform?.call_id as string;
    expect(freshId).toMatch(/^call_/);
    expect(await receiptIds()).toContain(freshId);
  }, 120_000);

  /** A /mcp tools/call of `name`, with what it answered. */
  async function aggregateCall(id: number, name: string, args: unknown): Promise<Answer> {
    const res = await post(
      '/mcp',
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
      { 'mcp-protocol-version': '2025-06-18' },
    );
    const response = responseOf(res.text, res.contentType, id);
    return {
      path: 'aggregate',
      phase: 'outage',
      status: res.status,
      contentType: res.contentType,
      result: response?.result,
      error: response?.error,
      body: res.text,
    };
  }

  /** Arguments nested deeper than the gateway passes on (256 levels): refused before any connector is asked. */
  const tooDeep = (): unknown => {
    let deep: unknown = 'x';
    for (let i = 0; i < 300; i++) deep = [deep];
    return { message: deep };
  };

  afterEach(() => {
    clock.held = undefined;
  });

  async function databaseDown(): Promise<void> {
    await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [dbName],
    );
  }

  const receiptsOf = async (callIds: string[]) =>
    plaza.db.prisma.$queryRawUnsafe<
      { call_id: string; provider: string; tool: string; status: string; outcome: string }[]
    >(
      `SELECT "call_id", "provider", "tool", "status", "outcome" FROM "receipts" WHERE "call_id" = ANY($1::text[])`,
      callIds,
    );

  it('receipts a /mcp call it refuses while the database is down as it receipts the calls it passes: spooled, then stored once', async () => {
    // A call first: the agent's credential, its policy and the connector are then known while the clock is held.
    clock.held = Date.now();
    expect((await aggregateCall(1, 'everything__echo', { message: 'warm' })).result?.isError).toBeFalsy();
    await databaseDown();
    let answers: Answer[];
    try {
      answers = [
        await aggregateCall(2, 'noseparator', {}),
        await aggregateCall(3, 'everything__echo', tooDeep()),
        await aggregateCall(4, 'everything__echo', { message: 'during' }),
      ];
    } finally {
      clock.held = undefined;
      await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`);
    }
    for (const a of answers) {
      expect(a.status, a.body).toBe(200);
      expect(a.result?._meta?.platform?.call_id, a.body).toMatch(/^call_/);
    }
    const [unknown, deep, passed] = answers;
    expect(unknown!.result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^Unknown tool noseparator.*nothing was called/) }],
    });
    expect(deep!.result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/nest deeper.*nothing was called/) }],
    });
    expect(passed!.result?.isError).toBeFalsy();
    const callIds = answers.map((a) => a.result!._meta!.platform!.call_id!);
    await expect.poll(async () => (await receiptsOf(callIds)).length, { timeout: 20_000, interval: 250 }).toBe(3);
    const stored = new Map((await receiptsOf(callIds)).map((r) => [r.call_id, r]));
    expect(stored.get(callIds[0]!)).toMatchObject({
      provider: '(unknown)',
      tool: 'noseparator',
      status: 'error',
      outcome: expect.stringMatching(/unknown tool noseparator/),
    });
    expect(stored.get(callIds[1]!)).toMatchObject({
      provider: 'everything',
      tool: 'echo',
      status: 'error',
      outcome: expect.stringMatching(/nest deeper/),
    });
    expect(stored.get(callIds[2]!)).toMatchObject({ provider: 'everything', tool: 'echo', status: 'ok' });
  }, 60_000);

  it('answers /mcp calls whose receipt can be stored nowhere (database down, spool unwritable) in words, never with its internals, and keeps serving', async () => {
    const spool = plaza.config.receipts.spoolDir;
    clock.held = Date.now();
    expect((await aggregateCall(10, 'everything__echo', { message: 'warm' })).result?.isError).toBeFalsy();
    await databaseDown();
    // The spool folder replaced by a file: the writer can append nowhere (root ignores modes).
    rmSync(spool, { recursive: true, force: true });
    writeFileSync(spool, 'not a folder');
    let answers: Answer[];
    try {
      answers = [
        await aggregateCall(11, 'noseparator', {}),
        await aggregateCall(12, 'everything__echo', tooDeep()),
        await aggregateCall(13, 'everything__echo', { message: 'unreceipted' }),
      ];
    } finally {
      rmSync(spool, { force: true });
      mkdirSync(spool, { mode: 0o700 });
      clock.held = undefined;
      await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`);
    }
    for (const a of answers) {
      expect(a.status, a.body).toBe(200);
      expect(a.contentType, a.body).toMatch(/^application\/json/);
      // The JSON-RPC answer is the call's isError result, not an error carrying a file system message.
      expect(a.error, a.body).toBeUndefined();
      expect(a.body).not.toContain(spool);
      expect(a.body).not.toMatch(/ENOTDIR|ENOENT|EACCES/);
      expect(a.result?.isError, a.body).toBe(true);
    }
    const [unknown, deep, ran] = answers;
    // Refused: nothing was called, and the caller learns no receipt says so.
    expect(unknown!.result!.content![0]!.text).toMatch(
      /^Unknown tool noseparator.*nothing was called.*could not record its receipt/,
    );
    expect(deep!.result!.content![0]!.text).toMatch(/nest deeper.*nothing was called.*could not record its receipt/);
    // Called: as /mcp/p/… answers it, stamped, its outcome unknown.
    expect(ran!.result!.content![0]!.text).toBe(
      'The call ran but Plaza could not record its receipt; treat its outcome as unknown.',
    );
    expect(ran!.result!._meta?.platform?.call_id).toMatch(/^call_/);

    // Serving as before once the database and the spool are back.
    expect((await fetch(`${plaza.url}/health`)).status).toBe(200);
    const after = await aggregateCall(14, 'everything__echo', { message: 'after' });
    const afterId = after.result?._meta?.platform?.call_id;
    expect(afterId, after.body).toMatch(/^call_/);
    // Spooled (the writer stays on the spool until a replay succeeds), then stored.
    await expect.poll(async () => (await receiptsOf([afterId!])).length, { timeout: 20_000, interval: 250 }).toBe(1);
  }, 60_000);
});
