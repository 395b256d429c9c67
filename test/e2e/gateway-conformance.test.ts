/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance server`) run twice against the same
 * `@modelcontextprotocol/server-everything`: once directly, once through Plaza's
 * `/mcp/p/<provider>` passthrough. Every scenario (and every check) that passes direct must pass
 * through the gateway. The suite has no option for extra request headers, so a small forwarding
 * proxy in front of Plaza adds the agent's bearer token (it streams both ways, SSE included).
 *
 * Skipped when the conformance package is not installed (it is a dev dependency the lead adds);
 * `CONFORMANCE_BIN` may point at its `dist/index.js` instead.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { runChild } from '../support/children.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const require = createRequire(import.meta.url);

function conformanceBin(): string | undefined {
  const fromEnv = process.env['CONFORMANCE_BIN'];
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  try {
    const root = dirname(require.resolve('@modelcontextprotocol/conformance/package.json'));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.['conformance'] ?? 'dist/index.js');
    return join(root, bin);
  } catch {
    return undefined;
  }
}

const BIN = conformanceBin();

type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
interface Check {
  id: string;
  name?: string;
  status: CheckStatus;
  errorMessage?: string;
}
/** scenario → its checks. */
type SuiteResult = Map<string, Check[]>;

/** Runs the server suite against `url`; returns every scenario's checks (from the saved checks.json files, or the summary). */
async function runSuite(url: string): Promise<{ result: SuiteResult; output: string }> {
  const outDir = mkdtempSync(join(tmpdir(), 'plaza-conformance-'));
  // The exit code says whether anything failed; the comparison below decides what matters.
  const { stdout, stderr } = await runChild(process.execPath, [BIN!, 'server', '--url', url, '--output-dir', outDir], {
    cwd: outDir,
    timeoutMs: 300_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  const result: SuiteResult = new Map();
  for (const file of readdirSync(outDir, { recursive: true, encoding: 'utf8' })) {
    if (basename(file) !== 'checks.json') continue;
    // Result folders are `server-<scenario>-<ISO timestamp>` (scenario names may hold `/`).
    const folder = dirname(file).replace(/\\/g, '/');
    const scenario = folder.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '').replace(/^server-/, '');
    result.set(scenario, JSON.parse(readFileSync(join(outDir, file), 'utf8')) as Check[]);
  }
  if (result.size === 0) {
    // Older releases without --output-dir: read the summary lines `✓ name: 3 passed, 0 failed`.
    for (const line of stdout.split('\n')) {
      const m = /^[✓✗] (\S+): (\d+) passed, (\d+) failed/.exec(line.trim());
      if (!m) continue;
      const checks: Check[] = [];
      for (let i = 0; i < Number(m[2]); i++) checks.push({ id: `${m[1]}#ok${i}`, status: 'SUCCESS' });
      for (let i = 0; i < Number(m[3]); i++) checks.push({ id: `${m[1]}#fail${i}`, status: 'FAILURE' });
      result.set(m[1]!, checks);
    }
  }
  rmSync(outDir, { recursive: true, force: true });
  return { result, output: `${stdout}\n${stderr}` };
}

const passed = (checks: Check[] | undefined) =>
  !!checks && checks.some((c) => c.status === 'SUCCESS') && !checks.some((c) => c.status === 'FAILURE');

/**
 * A forwarding proxy that adds the agent's credential: the conformance tool cannot send headers.
 * Bodies stream both ways unbuffered, so SSE responses and long-lived GET streams pass as they come.
 */
async function startAuthProxy(target: string, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host, authorization: `Bearer ${token}` };
    const out = httpRequest(
      { hostname: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    out.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe.skipIf(!BIN)('MCP conformance: server-everything direct vs through /mcp/p/<provider>', () => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let proxy: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    [plaza, everything] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'warn' } }),
      startEverything(),
    ]);
    const apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'conformance@example.com',
      })
    ).apiKey;
    const api = async (path: string, body?: unknown) => {
      const res = await fetch(`${plaza.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as any;
    };
    const listed = await api('/api/mcp/listings', {
      provider: 'everything',
      url: everything.url,
      registered_by: 'ops@example.com',
      agin_support: true,
      summary: 'Reference MCP server for the conformance run.',
    });
    let status = 'registered';
    for (let i = 0; i < 150 && status !== 'healthy'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await api(`/api/mcp/endpoints/${listed.id}`)).status;
    }
    expect(status).toBe('healthy');
    const token = (await api('/api/agents', { display_name: 'Conformance agent' })).data.token as string;
    proxy = await startAuthProxy(`${plaza.url}/mcp/p/everything`, token);
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await everything?.stop();
    await plaza?.close();
  });

  it('passes through the gateway every scenario and check that passes direct', async () => {
    const direct = await runSuite(everything.url);
    const gateway = await runSuite(proxy.url);
    const passingDirect = [...direct.result].filter(([, checks]) => passed(checks)).map(([name]) => name);
    // The suite must actually have run against the upstream, or the comparison proves nothing.
    expect(passingDirect.length, `no scenario passed direct:\n${direct.output.slice(-4000)}`).toBeGreaterThan(0);

    const regressions: string[] = [];
    for (const scenario of passingDirect) {
      const through = gateway.result.get(scenario);
      if (!through) {
        regressions.push(`${scenario}: did not run through the gateway`);
        continue;
      }
      for (const check of direct.result.get(scenario)!.filter((c) => c.status === 'SUCCESS')) {
        const same = through.filter((c) => c.id === check.id);
        if (same.length === 0 || same.some((c) => c.status === 'FAILURE')) {
          const failure = same.find((c) => c.status === 'FAILURE');
          regressions.push(`${scenario} / ${check.id}: ${failure?.errorMessage ?? 'missing through the gateway'}`);
        }
      }
      if (!passed(through))
        regressions.push(
          `${scenario}: fails through the gateway (${through
            .filter((c) => c.status === 'FAILURE')
            .map((c) => c.errorMessage ?? c.id)
            .join('; ')})`,
        );
    }
    expect(regressions, `gateway output:\n${gateway.output.slice(-4000)}`).toEqual([]);
    // Every call the suite made through the gateway left a receipt (tools/call scenarios exist in every release).
    const calls = (
      await plaza.db.prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "receipts" WHERE "provider" = 'everything'`,
      )
    )[0]!.n;
    expect(calls).toBeGreaterThan(0);
  }, 600_000);
});
