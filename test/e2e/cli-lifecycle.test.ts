/**
 * The real `plaza` command as a newcomer runs it: `serve` on embedded storage, `accounts create`
 * while the server owns the folder (through its socket), the lock against a second server, data
 * surviving a restart, graceful drain on SIGTERM, an immediate exit on a second signal, and exit
 * code 2 naming the variable on bad configuration; on PostgreSQL, a receipt spool slot for each
 * server started on one data folder.
 */
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

import { startChild } from '../support/children.ts';
import { childEnv, freePort, runPlaza, type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { createPostgresDatabase } from '../support/databases.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'plaza-e2e-'));
const servers: ServerProcess[] = [];

afterAll(() => {
  for (const s of servers) s.child.kill('SIGKILL');
});

async function whoami(url: string, key: string): Promise<Response> {
  return fetch(`${url}/api/account`, { headers: { authorization: `Bearer ${key}` } });
}

describe('plaza serve on embedded storage', () => {
  let apiKey = '';

  it('serves /health and lets `plaza accounts create` work through the running server', async () => {
    const server = await startPlazaServer({ PLAZA_DATA_DIR: dataDir });
    servers.push(server);
    const created = await runPlaza(['accounts', 'create', '--email', 'ada@example.com', '--name', 'Ada'], {
      PLAZA_DATA_DIR: dataDir,
    });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const out = JSON.parse(created.stdout) as { account_id: string; api_key: string };
    expect(out.account_id).toMatch(/^acc_/);
    apiKey = out.api_key;
    const res = await whoami(server.url, apiKey);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.account.email).toBe('ada@example.com');
    const tampered = `${apiKey.slice(0, -1)}${apiKey.endsWith('x') ? 'y' : 'x'}`;
    expect((await whoami(server.url, tampered)).status).toBe(401);
  });

  it('refuses a second server on the same folder', async () => {
    const second = await runPlaza(['serve'], { PLAZA_DATA_DIR: dataDir, PORT: '0' }, 30_000);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/in use by another Plaza process/);
  });

  it('says so, without a stack trace, when the port is taken', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const run = await runPlaza(
        ['serve'],
        { PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-e2e-port-')), PORT: String(port), HOST: '127.0.0.1' },
        30_000,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      taken.close();
    }
  });

  it('stops the server when `npm start` itself gets SIGTERM (as a process manager sends it)', async () => {
    const port = await freePort();
    const npm = startChild('npm', ['start'], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: childEnv({
        PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-e2e-npm-')),
        HOST: '127.0.0.1',
        PORT: String(port),
        MCP_REGISTRY_URL: 'off',
      }),
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const npmExited = once(npm, 'exit');
    const healthy = async () =>
      fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
    while (!(await healthy())) await new Promise((r) => setTimeout(r, 100));
    npm.kill('SIGTERM');
    await npmExited;
    // The server itself stopped: nothing listens on its port any more.
    expect(await healthy()).toBe(false);
  });

  it('drains an in-flight request on SIGTERM and exits 0', async () => {
    const server = servers[0]!;
    const { port } = new URL(server.url);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/account',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write('{"slow":');
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end('true}'), 500);
      }, 200);
    });
    const { status, body } = await answer;
    // /api/account takes GET: the drained POST is answered 405, in the API's shape.
    expect(status).toBe(405);
    expect(JSON.parse(body)).toMatchObject({ success: false, code: 'method_not_allowed' });
    expect(await server.exited).toBe(0);
  });

  it('keeps data across a restart', async () => {
    const server = await startPlazaServer({ PLAZA_DATA_DIR: dataDir });
    servers.push(server);
    expect((await whoami(server.url, apiKey)).status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('exits at once on a second signal', async () => {
    const server = await startPlazaServer({ PLAZA_DATA_DIR: dataDir, PLAZA_SHUTDOWN_TIMEOUT_MS: '60000' });
    servers.push(server);
    const { port } = new URL(server.url);
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/x',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    req.on('error', () => undefined);
    req.write('{');
    await new Promise((r) => setTimeout(r, 200));
    server.child.kill('SIGTERM');
    // One Ctrl-C can arrive twice (npm and the process group both pass it on): not a second signal.
    // (30 ms apart, as seen: sent back to back, the kernel merges them into one.)
    await new Promise((r) => setTimeout(r, 30));
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(server.child.exitCode).toBeNull();
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(130);
    req.destroy();
  });
});

describe('plaza configuration errors', () => {
  it.each([
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://nope'],
  ])('exits 2 naming %s', async (name, value) => {
    const result = await runPlaza(['serve'], { [name]: value });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(name);
  });

  it.each(['serve', 'migrate'])(
    'plaza %s says which database it cannot use, without a stack trace, and exits 1',
    async (command) => {
      // `.invalid` never resolves (RFC 6761): the failure is immediate.
      const result = await runPlaza([command], { DATABASE_URL: 'postgresql://plaza@db.invalid:5432/plaza', PORT: '0' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('cannot use the database (postgresql db.invalid:5432/plaza)');
      expect(result.stderr).toContain('DATABASE_URL');
      expect(result.stderr).not.toContain('cannot listen');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('says when a command creates a database of its own (a folder no server has used)', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'plaza-e2e-fresh-'));
    const first = await runPlaza(['accounts', 'create', '--email', 'new@example.com'], { PLAZA_DATA_DIR: fresh });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`plaza: no database in ${fresh} yet: creating one.`);
    expect(first.stderr).toContain('set PLAZA_DATA_DIR (or DATABASE_URL) as the server has it');
    const second = await runPlaza(['accounts', 'create', '--email', 'next@example.com'], { PLAZA_DATA_DIR: fresh });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe('');
  });

  it('prints help and version', async () => {
    const [help, version] = await Promise.all([runPlaza(['--help'], {}), runPlaza(['--version'], {})]);
    expect(help.stdout).toMatch(/serve[\s\S]*migrate[\s\S]*accounts/);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe.runIf(process.env['TEST_DATABASE_URL'])('plaza on PostgreSQL', () => {
  it('migrates, creates an account and serves it', async () => {
    const created = await createPostgresDatabase();
    try {
      const env = { DATABASE_URL: created.url };
      const migrated = await runPlaza(['migrate'], env);
      expect(migrated.code).toBe(0);
      expect(JSON.parse(migrated.stdout).applied.length).toBeGreaterThan(0);
      const again = await runPlaza(['migrate'], env);
      expect(JSON.parse(again.stdout).applied).toEqual([]);
      const account = JSON.parse((await runPlaza(['accounts', 'create', '--email', 'pg@example.com'], env)).stdout) as {
        api_key: string;
      };
      const server = await startPlazaServer(env);
      servers.push(server);
      expect((await whoami(server.url, account.api_key)).status).toBe(200);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await created.drop();
    }
  });

  it('gives a second server on the same data folder a spool slot of its own, and replays what a stopped server left in its slot', async () => {
    // Two instances started from one folder share ./.plaza: one spool would have replays rename
    // and delete each other's files. Each takes a slot: spool, spool.2, …
    const created = await createPostgresDatabase();
    const shared = mkdtempSync(join(tmpdir(), 'plaza-e2e-spool-'));
    const spool = join(shared, 'spool');
    const lockPid = (dir: string) => JSON.parse(readFileSync(join(dir, 'spool.lock'), 'utf8')).pid as number;
    try {
      const env = { DATABASE_URL: created.url, PLAZA_DATA_DIR: shared };
      const first = await startPlazaServer(env);
      servers.push(first);
      const second = await startPlazaServer(env);
      servers.push(second);
      expect(lockPid(spool)).toBe(first.child.pid);
      expect(lockPid(`${spool}.2`)).toBe(second.child.pid);
      expect(second.output()).toContain(`this one spools to ${spool}.2`);
      const third = await startPlazaServer(env);
      servers.push(third);
      expect(lockPid(`${spool}.3`)).toBe(third.child.pid);
      // Two servers die while the database was down for them: their slots hold spooled receipts.
      second.child.kill('SIGKILL');
      third.child.kill('SIGKILL');
      await Promise.all([second.exited, third.exited]);
      const receipt = (callId: string) =>
        `${JSON.stringify({ callId, aginId: 'agin_spooled', agentPrincipal: 'agent:spooled', accountId: null, tool: 'echo', provider: 'p', status: 'ok', outcome: 'ok', latencyMs: 1, resultDigest: 'a'.repeat(64), time: Date.now() })}\n`;
      writeFileSync(join(`${spool}.2`, 'receipts.spool.jsonl'), receipt('call_left_in_slot_2'));
      writeFileSync(join(`${spool}.3`, 'receipts.spool.jsonl'), receipt('call_left_in_slot_3'));
      // The next server takes slot 2 (the first free) and moves slot 3's receipts into it.
      const next = await startPlazaServer(env);
      servers.push(next);
      expect(lockPid(`${spool}.2`)).toBe(next.child.pid);
      expect(next.output()).toContain('took over receipts spooled by a stopped server');
      expect(readdirSync(`${spool}.3`).filter((name) => name.startsWith('receipts.'))).toEqual([]);
      const db = new pg.Client({ connectionString: created.url });
      await db.connect();
      try {
        await expect
          .poll(
            async () =>
              (await db.query(`SELECT call_id FROM receipts WHERE agin_id = 'agin_spooled' ORDER BY call_id`)).rows.map(
                (r) => r.call_id,
              ),
            { timeout: 15_000 },
          )
          .toEqual(['call_left_in_slot_2', 'call_left_in_slot_3']);
      } finally {
        await db.end();
      }
      next.child.kill('SIGTERM');
      expect(await next.exited).toBe(0);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    } finally {
      await created.drop();
    }
  }, 90_000);
});
