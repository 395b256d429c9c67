/**
 * Two real `plaza serve` processes on one fresh PostgreSQL database and one Redis (a private key
 * prefix), behind a round-robin proxy that sends every HTTP request to the next instance. Proves
 * what docs/scale-out.md promises: rate limits are global (intent, leads, guest tokens, chat), each
 * endpoint is probed by one instance per round (leases), an MCP session opened on one instance
 * continues on the other, a revoked agent is refused by both within 5 s, and the receipts written
 * by both form one chain that the real `plaza receipts verify` accepts.
 * Runs only when TEST_DATABASE_URL and TEST_REDIS_URL are set.
 */
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { randomToken } from '../../src/kernel/index.ts';
import { createTestTls } from '../support/agpk.ts';
import { runPlaza, type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { createPostgresDatabase } from '../support/databases.ts';
import {
  type EverythingServer,
  type SdkUpstream,
  startEverything,
  startSdkUpstream,
} from '../support/mcp-upstreams.ts';
import { type RoundRobinProxy, startRoundRobinProxy } from '../support/round-robin-proxy.ts';
import { buildPackage } from '../support/sources.ts';

const DATABASE = process.env['TEST_DATABASE_URL'];
const REDIS = process.env['TEST_REDIS_URL'];
const PROBED_ENDPOINTS = 6;
const PROBE_DELAY_MS = 300;
const SOURCES = 3;
const THIRD_PARTY_TOKEN = `crm-secret-${randomToken(12)}`;

/**
 * A stateless JSON MCP provider serving `/ep/<n>/mcp`: it answers tools/list slowly and notes, per
 * endpoint, every probe's time and whether another probe of the same endpoint was in flight.
 */
async function startProbeTargets(): Promise<{
  url: string;
  lists: Map<string, number[]>;
  overlaps: string[];
  close(): Promise<void>;
}> {
  const lists = new Map<string, number[]>();
  const inFlight = new Map<string, number>();
  const overlaps: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const endpoint = /^\/ep\/(\d+)\/mcp$/.exec(req.url ?? '')?.[1];
    if (!endpoint || req.method !== 'POST') return res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const message = JSON.parse(raw) as { id?: number; method: string; params?: { protocolVersion?: string } };
    if (message.id === undefined) return res.writeHead(202).end();
    let result: unknown;
    if (message.method === 'initialize') {
      result = {
        protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: `ep${endpoint}`, version: '1' },
      };
    } else if (message.method === 'tools/list') {
      const running = inFlight.get(endpoint) ?? 0;
      if (running > 0) overlaps.push(endpoint);
      inFlight.set(endpoint, running + 1);
      lists.set(endpoint, [...(lists.get(endpoint) ?? []), Date.now()]);
      await new Promise((r) => setTimeout(r, PROBE_DELAY_MS));
      inFlight.set(endpoint, (inFlight.get(endpoint) ?? 1) - 1);
      result = {
        tools: [
          { name: `tool_${endpoint}`, description: `Tool of endpoint ${endpoint}`, inputSchema: { type: 'object' } },
        ],
      };
    } else {
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lists,
    overlaps,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/**
 * An HTTPS download origin (test CA) for package archives: each download is answered slowly and
 * noted per path with its time and whether another download of the same path was in flight.
 */
async function startDownloadOrigin(
  files: Map<string, string>,
): Promise<{ url: string; caFile: string; gets: Map<string, number[]>; overlaps: string[]; close(): Promise<void> }> {
  const tls = await createTestTls();
  const caFile = join(mkdtempSync(join(tmpdir(), 'plaza-scale-ca-')), 'ca.pem');
  writeFileSync(caFile, tls.caCert);
  const gets = new Map<string, number[]>();
  const inFlight = new Map<string, number>();
  const overlaps: string[] = [];
  const server = createHttpsServer({ key: tls.key, cert: tls.cert }, async (req, res) => {
    const path = req.url ?? '/';
    const file = files.get(path);
    if (!file) return res.writeHead(404).end();
    const running = inFlight.get(path) ?? 0;
    if (running > 0) overlaps.push(path);
    inFlight.set(path, running + 1);
    gets.set(path, [...(gets.get(path) ?? []), Date.now()]);
    await new Promise((r) => setTimeout(r, PROBE_DELAY_MS));
    inFlight.set(path, (inFlight.get(path) ?? 1) - 1);
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caFile,
    gets,
    overlaps,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Asserts that consecutive times are at least `minGapMs` apart. */
function expectSpaced(times: number[], minGapMs: number, what: string): void {
  for (let k = 1; k < times.length; k++)
    expect(times[k]! - times[k - 1]!, `${what}: runs ${k - 1}..${k}`).toBeGreaterThanOrEqual(minGapMs);
}

describe.skipIf(!DATABASE || !REDIS)('two plaza serve instances on one PostgreSQL and one Redis', () => {
  let database: { url: string; drop(): Promise<void> };
  let sql: pg.Client;
  let everything: EverythingServer;
  let sdk: SdkUpstream;
  let targets: Awaited<ReturnType<typeof startProbeTargets>>;
  let origin: Awaited<ReturnType<typeof startDownloadOrigin>>;
  const packages: Array<{ id: string; path: string; sha256: string }> = [];
  let a: ServerProcess;
  let b: ServerProcess;
  /** Started late, without REDIS_URL: the mistake an operator can make. */
  let noRedis: ServerProcess | undefined;
  let proxy: RoundRobinProxy;
  let apiKey = '';
  /** Every credential handed out or sent in this suite: none may be stored or logged in clear. */
  const secrets: string[] = [];
  let env: Record<string, string> = {};

  beforeAll(async () => {
    database = await createPostgresDatabase(DATABASE, 'plaza_scale');
    const root = mkdtempSync(join(tmpdir(), 'plaza-scale-pkg-'));
    const files = new Map<string, string>();
    for (let i = 0; i < SOURCES; i++) {
      const id = `com.example.scale${i}`;
      const built = await buildPackage(root, { id, version: '1.0.0' });
      packages.push({ id, path: `/${id}-1.0.0.agpk`, sha256: built.sha256 });
      files.set(`/${id}-1.0.0.agpk`, built.path);
    }
    [everything, targets, origin, sdk] = await Promise.all([
      startEverything(),
      startProbeTargets(),
      startDownloadOrigin(files),
      startSdkUpstream(),
    ]);
    const backends: string[] = [];
    proxy = await startRoundRobinProxy(backends);
    env = {
      // One public address for all instances: tokens and assertions name it as their issuer.
      PUBLIC_BASE_URL: proxy.url,
      DATABASE_URL: database.url,
      REDIS_URL: REDIS!,
      PLAZA_RATE_LIMIT_KEY_PREFIX: `plaza-scale:${randomToken(8)}:`,
      PLAZA_RATE_LIMIT_INTENT_PER_MIN: '4',
      PLAZA_RATE_LIMIT_LEADS_PER_MIN: '3',
      GUEST_TOKEN_RPM_PER_IP: '3',
      CHAT_RPM_PER_SUBJECT: '3',
      CHAT_RPM_PER_IP: '1000',
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      PLAZA_PROBE_BASE_INTERVAL_S: '5',
      PLAZA_RECEIPTS_CHECKPOINT_INTERVAL_S: '1',
      PLAZA_SOURCES_RECHECK_S: '5',
      NODE_EXTRA_CA_CERTS: origin.caFile,
      LOG_LEVEL: 'info',
    };
    const migrated = await runPlaza(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    const account = await runPlaza(['accounts', 'create', '--email', 'scale@example.com'], env);
    apiKey = (JSON.parse(account.stdout) as { api_key: string }).api_key;
    secrets.push(apiKey);
    [a, b] = await Promise.all([startPlazaServer(env), startPlazaServer(env)]);
    backends.push(a.url, b.url);
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    for (const server of [a, b, noRedis]) server?.child.kill('SIGKILL');
    await Promise.all([a?.exited, b?.exited, noRedis?.exited]);
    await sql?.end();
    await everything?.stop();
    await sdk?.close();
    await targets?.close();
    await origin?.close();
    await database?.drop();
    // Only the keys this suite created (its private prefix); some would live for a day.
    if (env['PLAZA_RATE_LIMIT_KEY_PREFIX']) {
      const redis = new Redis(REDIS!);
      const keys = await redis.keys(`${env['PLAZA_RATE_LIMIT_KEY_PREFIX']}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  }, 30_000);

  async function post(
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: any; backend: number }> {
    const res = await fetch(`${proxy.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json(), backend: proxy.log.at(-1)!.backend };
  }

  /** Lists the SDK provider as `sdk` (once) and waits until a probe found it healthy. */
  let sdkListing: Promise<void> | undefined;
  const listSdk = () =>
    (sdkListing ??= (async () => {
      const listed = await post('/api/mcp/listings', {
        provider: 'sdk',
        url: sdk.url,
        registered_by: 'ops@example.com',
        agin_support: true,
        summary: 'SDK provider; no credentials; logs agin_id.',
      });
      expect(listed.status).toBe(201);
      await expect
        .poll(
          async () =>
            (await sql.query<{ status: string }>(`SELECT status FROM mcp_endpoints WHERE provider = 'sdk'`)).rows[0]
              ?.status,
          { timeout: 10_000 },
        )
        .toBe('healthy');
    })());

  describe('rate limits hold across instances', () => {
    it('counts intent requests once for both instances', async () => {
      const answers = [];
      for (let i = 0; i < 6; i++)
        answers.push(await post('/api/agent/intent', { prompt: 'We need receipts for every agent call' }));
      expect(answers.map((x) => x.backend)).toEqual([0, 1, 0, 1, 0, 1]);
      expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200, 429, 429]);
      expect(answers[5]!.body).toMatchObject({ success: false, code: 'rate_limited' });
    });

    it('counts lead submissions once for both instances', async () => {
      const statuses = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await post('/api/leads', { email: `lead${i}@example.com`, scenario: 'growth' })).status);
      expect(statuses.slice(0, 3).every((s) => s === 201 || s === 200)).toBe(true);
      expect(statuses.slice(3)).toEqual([429, 429]);
    });

    it('counts guest tokens and chat requests once for both instances', async () => {
      const guests = [];
      for (let i = 0; i < 5; i++) guests.push(await post('/api/auth/guest-token', {}));
      expect(guests.map((g) => g.status)).toEqual([200, 200, 200, 429, 429]);
      expect(guests[3]!.body.error.code).toBe('RATE_LIMITED');
      const token = guests[0]!.body.data.token as string;
      secrets.push(...guests.filter((g) => g.status === 200).map((g) => g.body.data.token as string));
      const chats = [];
      for (let i = 0; i < 5; i++) {
        chats.push(
          await post(
            '/api/v1/chat/completions',
            { model: 'plaza-assistant', messages: [{ role: 'user', content: 'Which plan fits a team of 10?' }] },
            { authorization: `Bearer ${token}` },
          ),
        );
      }
      expect(new Set(chats.map((c) => c.backend))).toEqual(new Set([0, 1]));
      expect(chats.map((c) => c.status)).toEqual([200, 200, 200, 429, 429]);
      expect(a.output() + b.output()).not.toContain('fall back to per-instance counts');
    });
  });

  describe('probes and the gateway', () => {
    it('probes each endpoint and each package source by one instance at a time, once per round', async () => {
      for (const pkg of packages) {
        const registered = await post('/api/agpk/sources', {
          package_id: pkg.id,
          name: `Scale ${pkg.id}`,
          version: '1.0.0',
          summary: 'A package for the scale-out test.',
          vendor_name: 'Example Inc',
          download_uri: `${origin.url}${pkg.path}`,
          sha256: pkg.sha256,
        });
        expect(registered.status).toBe(202);
      }
      for (let i = 0; i < PROBED_ENDPOINTS; i++) {
        const listed = await post('/api/mcp/listings', {
          provider: `ep-${i}`,
          url: `${targets.url}/ep/${i}/mcp`,
          registered_by: 'ops@example.com',
          agin_support: true,
          summary: `Probe target ${i}; no credentials; logs agin_id.`,
        });
        expect(listed.status).toBe(201);
      }
      const everythingListed = await post('/api/mcp/listings', {
        provider: 'everything',
        url: everything.url,
        registered_by: 'ops@example.com',
        agin_support: true,
        summary: 'Reference MCP server; no credentials; logs agin_id.',
      });
      expect(everythingListed.status).toBe(201);
      // The first probe runs at once, the next after 8-12 s (idle healthy: twice the 5 s base, ±20 %),
      // found by a loop of either instance within 2 s. Waited for until every endpoint has two
      // recorded probes and every source two downloads (a second instance probing the same round
      // would make those two at once, and the spacing below fails).
      const probeRuns = async () =>
        new Map(
          (
            await sql.query<{ provider: string; n: number }>(
              `SELECT e.provider, count(*)::int AS n FROM probe_runs r JOIN mcp_endpoints e ON e.id = r.endpoint_id WHERE e.provider LIKE 'ep-%' GROUP BY e.provider`,
            )
          ).rows.map((r) => [r.provider, r.n]),
        );
      await expect
        .poll(
          async () => {
            const runs = await probeRuns();
            const probed = Array.from({ length: PROBED_ENDPOINTS }, (_, i) => runs.get(`ep-${i}`) ?? 0).every(
              (n) => n >= 2,
            );
            const downloaded = packages.every((pkg) => (origin.gets.get(pkg.path)?.length ?? 0) >= 2);
            return probed && downloaded;
          },
          { timeout: 25_000, interval: 250 },
        )
        .toBe(true);

      expect(targets.overlaps).toEqual([]);
      const runs = await sql.query<{ provider: string; started_at: Date; ok: boolean }>(
        `SELECT e.provider, r.started_at, r.ok FROM probe_runs r JOIN mcp_endpoints e ON e.id = r.endpoint_id WHERE e.provider LIKE 'ep-%' ORDER BY r.started_at`,
      );
      for (let i = 0; i < PROBED_ENDPOINTS; i++) {
        const times = runs.rows.filter((r) => r.provider === `ep-${i}`).map((r) => r.started_at.getTime());
        const seen = targets.lists.get(String(i)) ?? [];
        // Every probe the target answered is recorded once (one may still be running now).
        expect(times.length, `endpoint ${i}`).toBeGreaterThanOrEqual(2);
        expect(seen.length - times.length, `endpoint ${i}`).toBeGreaterThanOrEqual(0);
        expect(seen.length - times.length, `endpoint ${i}`).toBeLessThanOrEqual(1);
        // The scheduler never waits less than 5 s between probes; a second instance probing
        // the same round would show up as two runs close together.
        expectSpaced(times, 4_500, `endpoint ${i}`);
      }
      // Package sources: rechecked every 5 s once healthy, each download by one instance.
      expect(origin.overlaps).toEqual([]);
      const sources = await sql.query<{ package_id: string; status: string }>(
        `SELECT package_id, status FROM package_sources`,
      );
      expect(sources.rows.map((r) => r.status)).toEqual(packages.map(() => 'healthy'));
      for (const pkg of packages) {
        const downloads = origin.gets.get(pkg.path) ?? [];
        expect(downloads.length, pkg.id).toBeGreaterThanOrEqual(2);
        expectSpaced(downloads, 4_500, pkg.id);
      }
      const health = await sql.query<{ status: string }>(
        `SELECT status FROM mcp_endpoints WHERE provider = 'everything'`,
      );
      expect(health.rows[0]?.status).toBe('healthy');
    }, 30_000);

    it('continues an MCP session opened on one instance on the other', async () => {
      const created = await post(
        '/api/agents',
        { display_name: 'Scale agent', owner_context: 'scale' },
        { authorization: `Bearer ${apiKey}` },
      );
      expect(created.status).toBe(201);
      const token = created.body.data.token as string;
      secrets.push(token, THIRD_PARTY_TOKEN);
      const from = proxy.log.length;
      const client = new Client({ name: 'scale-agent', version: '1' });
      // The caller's own third-party credential rides along (it must go upstream, nowhere else).
      const transport = new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp/p/everything`), {
        requestInit: {
          headers: {
            authorization: `Bearer ${token}`,
            'x-platform-upstream-authorization': `Bearer ${THIRD_PARTY_TOKEN}`,
          },
        },
      });
      await client.connect(transport);
      const sessionId = transport.sessionId;
      expect(sessionId).toMatch(/^pss1\./);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
      for (let i = 0; i < 4; i++) {
        const echoed = await client.callTool({ name: 'echo', arguments: { message: `hop ${i}` } });
        expect(echoed.isError).toBeFalsy();
        expect(JSON.stringify(echoed.content)).toContain(`hop ${i}`);
      }
      await client.close();
      // The session's requests (after initialize) were served by both instances.
      const inSession = proxy.log
        .slice(from)
        .filter((r) => r.path === '/mcp/p/everything' && r.headers['mcp-session-id'] === sessionId);
      expect(new Set(inSession.map((r) => r.backend))).toEqual(new Set([0, 1]));
      expect(inSession.filter((r) => r.body.includes('"tools/call"')).every((r) => r.status === 200)).toBe(true);
    }, 30_000);

    it('passes on a cancellation that reaches another instance than its call, and receipts the call as cancelled', async () => {
      await listSdk();
      const created = await post(
        '/api/agents',
        { display_name: 'Cancelling agent', owner_context: 'scale' },
        { authorization: `Bearer ${apiKey}` },
      );
      const token = created.body.data.token as string;
      secrets.push(token);
      const rpc = (url: string, body: object, session?: string) =>
        fetch(`${url}/mcp/p/sdk`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(session ? { 'mcp-session-id': session } : {}),
          },
          body: JSON.stringify(body),
        });
      const opened = await rpc(a.url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cancelling', version: '1' } },
      });
      const session = opened.headers.get('mcp-session-id')!;
      await opened.text();
      expect((await rpc(b.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
      // The call runs on a; the client's cancellation, a POST of its own, reaches b (as it may behind a load balancer).
      const call = rpc(
        a.url,
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { ms: 5_000 } } },
        session,
      ).then((res) => res.text());
      await expect.poll(() => sdk.seen.some((s) => s.body?.method === 'tools/call')).toBe(true);
      const cancelledAt = Date.now();
      expect(
        (
          await rpc(
            b.url,
            {
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId: 7, reason: 'the user pressed stop' },
            },
            session,
          )
        ).status,
      ).toBe(202);
      // The upstream stops the call (it knows it by its call id), and a ends the call's stream without an answer.
      await expect.poll(() => sdk.slow.aborted, { timeout: 2_000 }).toBe(1);
      const answer = await call;
      expect(Date.now() - cancelledAt).toBeLessThan(2_000);
      expect(answer).not.toContain('slept');
      expect(sdk.slow.done).toBe(0);
      const receipt = await sql.query<{ status: string; outcome: string }>(
        `SELECT status, outcome FROM receipts WHERE tool = 'slow'`,
      );
      expect(receipt.rows).toEqual([{ status: 'error', outcome: 'upstream failure: the caller cancelled the call' }]);
    }, 20_000);

    it("ends a call running on one instance when its client resumes the call's stream on the other, so the error it gets is true", async () => {
      // A provider whose call streams can be resumed: they open with a priming event under an id.
      const resumable = await startSdkUpstream({ eventStore: true, retryInterval: 1_000 });
      try {
        const listed = await post('/api/mcp/listings', {
          provider: 'sdk-resumable',
          url: resumable.url,
          registered_by: 'ops@example.com',
          agin_support: true,
          summary: 'Resumable SDK provider; no credentials.',
        });
        expect(listed.status).toBe(201);
        await expect
          .poll(
            async () =>
              (await sql.query<{ status: string }>(`SELECT status FROM mcp_endpoints WHERE provider = 'sdk-resumable'`))
                .rows[0]?.status,
            { timeout: 10_000 },
          )
          .toBe('healthy');
        const created = await post(
          '/api/agents',
          { display_name: 'Resuming agent', owner_context: 'scale' },
          { authorization: `Bearer ${apiKey}` },
        );
        const token = created.body.data.token as string;
        secrets.push(token);
        // Priming events come with protocol 2025-11-25, which a request names in its header.
        const headers = {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        };
        const rpc = (url: string, body: object, session?: string) =>
          fetch(`${url}/mcp/p/sdk-resumable`, {
            method: 'POST',
            headers: { ...headers, ...(session ? { 'mcp-session-id': session } : {}) },
            body: JSON.stringify(body),
          });
        const opened = await rpc(a.url, {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'resuming', version: '1' } },
        });
        const session = opened.headers.get('mcp-session-id')!;
        await opened.text();
        expect((await rpc(b.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
        // The call runs on a, its POST stream still open there (a has not seen the client's
        // connection break). Its first event is the provider's priming one, under Plaza's id.
        const call = await rpc(
          a.url,
          { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow', arguments: { ms: 8_000 } } },
          session,
        );
        const reader = call.body!.getReader();
        let seen = '';
        while (!/(?:^|\n)id: [^\n]+\n/.test(seen)) seen += new TextDecoder().decode((await reader.read()).value);
        const eventId = /(?:^|\n)id: ([^\n]+)\n/.exec(seen)![1]!;
        // The client resumes the call's stream through the load balancer, on b.
        const resumed = await fetch(`${b.url}/mcp/p/sdk-resumable`, {
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'text/event-stream',
            'mcp-protocol-version': '2025-11-25',
            'mcp-session-id': session,
            'last-event-id': eventId,
          },
        });
        expect(resumed.status).toBe(200);
        const answer = JSON.parse(/data: (.+)/.exec(await resumed.text())![1]!);
        expect(answer).toMatchObject({ id: 9, result: { isError: true } });
        // b had a end the call: the provider stops it, and its receipt says error, not a later ok.
        await expect.poll(() => resumable.slow.aborted, { timeout: 3_000 }).toBe(1);
        expect(resumable.slow.done).toBe(0);
        const callId = answer.result._meta.platform.call_id as string;
        await expect
          .poll(
            async () =>
              (
                await sql.query<{ status: string }>(`SELECT status FROM receipts WHERE call_id = $1`, [callId])
              ).rows.map((r) => r.status),
            { timeout: 3_000 },
          )
          .toEqual(['error']);
        await reader.cancel().catch(() => undefined);
      } finally {
        await resumable.close();
      }
    }, 30_000);

    it('refuses a revoked agent on both instances within 5 s', async () => {
      const created = await post(
        '/api/agents',
        { display_name: 'Doomed agent', owner_context: 'scale' },
        { authorization: `Bearer ${apiKey}` },
      );
      const token = created.body.data.token as string;
      secrets.push(token);
      const list = (url: string) =>
        fetch(`${url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        }).then((res) => res.status);
      // Both instances have seen (and cached) the credential as valid.
      expect(await list(a.url)).toBe(200);
      expect(await list(b.url)).toBe(200);
      // A notification stream opened on b before the revocation must end within 5 s too.
      const rpc = (body: object, session?: string) =>
        fetch(`${b.url}/mcp/p/everything`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(session ? { 'mcp-session-id': session } : {}),
          },
          body: JSON.stringify(body),
        });
      const opened = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'doomed', version: '1' } },
      });
      const session = opened.headers.get('mcp-session-id')!;
      await opened.text();
      expect(session).toBeTruthy();
      expect((await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
      const stream = await fetch(`${b.url}/mcp/p/everything`, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': session },
      });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      const streamEnded = (async () => {
        try {
          while (!(await reader.read()).done);
        } catch {
          // Cut rather than ended: over all the same.
        }
        return Date.now();
      })();
      const revoked = await fetch(`${a.url}/api/agents/${created.body.data.agent.id}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(revoked.status).toBe(200);
      const at = Date.now();
      const refusedAfter: number[] = [];
      for (const url of [a.url, b.url]) {
        while ((await list(url)) !== 401 && Date.now() - at < 6_000) await new Promise((r) => setTimeout(r, 100));
        refusedAfter.push(Date.now() - at);
      }
      expect(
        refusedAfter.every((ms) => ms <= 5_000),
        `refused after ${refusedAfter.join(', ')} ms`,
      ).toBe(true);
      expect(await list(a.url)).toBe(401);
      expect(await list(b.url)).toBe(401);
      const streamEndedAfter =
        (await Promise.race([
          streamEnded,
          new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 6_000)),
        ])) - at;
      await reader.cancel().catch(() => undefined);
      expect(streamEndedAfter, `the open stream ended after ${streamEndedAfter} ms`).toBeLessThanOrEqual(5_000);
    }, 15_000);

    it('writes one receipt chain from both instances that plaza receipts verify accepts', async () => {
      const created = await post(
        '/api/agents',
        { display_name: 'Chain agent', owner_context: 'scale' },
        { authorization: `Bearer ${apiKey}` },
      );
      const token = created.body.data.token as string;
      secrets.push(token);
      const from = proxy.log.length;
      // Four stateless clients on the aggregated endpoint, calls interleaved across instances.
      const callIds = await Promise.all(
        [0, 1, 2, 3].map(async (c) => {
          const client = new Client({ name: `chain-${c}`, version: '1' });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`), {
              requestInit: { headers: { authorization: `Bearer ${token}` } },
            }),
          );
          const ids: string[] = [];
          for (let i = 0; i < 5; i++) {
            const result = await client.callTool({
              name: 'everything__echo',
              arguments: { message: `chain ${c}.${i}` },
            });
            expect(result.isError).toBeFalsy();
            ids.push((result._meta as any).platform.call_id as string);
          }
          await client.close();
          return ids;
        }),
      );
      const calls = proxy.log.slice(from).filter((r) => r.path === '/mcp' && r.body.includes('"tools/call"'));
      expect(calls).toHaveLength(20);
      expect(new Set(calls.map((r) => r.backend))).toEqual(new Set([0, 1]));

      const rows = await sql.query<{
        seq: string;
        call_id: string;
        prev_hash: string | null;
        leaf_hash: string | null;
      }>(`SELECT seq, call_id, prev_hash, leaf_hash FROM receipts ORDER BY seq`);
      const stored = new Set(rows.rows.map((r) => r.call_id));
      for (const id of callIds.flat()) expect(stored.has(id)).toBe(true);
      expect(rows.rows.every((r) => r.prev_hash && r.leaf_hash)).toBe(true);

      // Receipts are only visible through a checkpoint made after them: ask for one first.
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await fetch(`${proxy.url}/api/receipts/checkpoints/latest`)).status).toBe(200);
      const verified = await runPlaza(['receipts', 'verify', '--url', proxy.url, '--key', apiKey, '--json'], {});
      expect(verified.code, verified.stderr).toBe(0);
      const report = JSON.parse(verified.stdout) as { ok: boolean; receipts: number; checkpoint: { treeSize: number } };
      expect(report.ok).toBe(true);
      expect(report.receipts).toBe(rows.rows.length);
      expect(report.checkpoint.treeSize).toBe(rows.rows.length);
      expect(a.output() + b.output()).not.toContain('receipt log damaged');
    }, 60_000);
  });

  it('keeps an SDK client going when the instance holding its notification stream stops: calls go on, notifications resume on the other', async () => {
    await listSdk();
    const created = await post(
      '/api/agents',
      { display_name: 'Stopping agent', owner_context: 'scale' },
      { authorization: `Bearer ${apiKey}` },
    );
    const token = created.body.data.token as string;
    secrets.push(token);
    // Its own instance, so the suite's two stay up; the GET stream lands on it (third request).
    const leaving = await startPlazaServer(env);
    const pool = [leaving.url, a.url];
    const balancer = await startRoundRobinProxy(pool);
    try {
      const client = new Client({ name: 'stopping-agent', version: '1' });
      const ticks: number[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, () => void ticks.push(Date.now()));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${balancer.url}/mcp/p/sdk`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      // The transport opens its stream once initialized, by itself: nothing else is sent meanwhile.
      await expect
        .poll(() => balancer.log.filter((r) => r.method === 'GET').map((r) => pool[r.backend]))
        .toEqual([leaving.url]);
      expect((await client.callTool({ name: 'tick', arguments: { ms: 200 } })).isError).toBeFalsy();
      await expect.poll(() => ticks.length).toBeGreaterThanOrEqual(3);
      // Taken out of the balancer first, then stopped, as an operator does.
      pool.splice(0, 1);
      const stoppedAt = Date.now();
      leaving.child.kill('SIGTERM');
      expect(await leaving.exited).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(3_000);
      for (let i = 0; i < 3; i++)
        expect(
          JSON.stringify((await client.callTool({ name: 'echo', arguments: { message: `after ${i}` } })).content),
        ).toContain(`after ${i}`);
      await expect
        .poll(() => ticks.filter((t) => t > stoppedAt + 500).length, { timeout: 5_000 })
        .toBeGreaterThanOrEqual(3);
      expect(balancer.log.filter((r) => r.method === 'GET').map((r) => r.status)).toEqual([200, 200]);
      await client.close();
    } finally {
      leaving.child.kill('SIGKILL');
      await balancer.close();
    }
  }, 40_000);

  it('says so when an instance on the same database runs without the others’ Redis', async () => {
    expect(a.output() + b.output()).not.toContain('do not share one Redis');
    // Its clients would get the limits again on top of the shared counts, and nothing said it.
    noRedis = await startPlazaServer({ ...env, REDIS_URL: '' });
    await expect.poll(() => noRedis!.output(), { timeout: 5_000 }).toContain('do not share one Redis');
    const warning = noRedis
      .output()
      .split('\n')
      .find((line) => line.includes('do not share one Redis'))!;
    expect(JSON.parse(warning)).toMatchObject({ level: 40, here: 'no REDIS_URL', elsewhere: ['Redis'] });
  }, 40_000);

  it('keeps no credential in clear in either instance’s logs or anywhere in the database', async () => {
    expect(secrets.length).toBeGreaterThanOrEqual(7);
    const logs = a.output() + b.output();
    const tables = await sql.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    expect(tables.rows.length).toBeGreaterThan(10);
    let rows = 0;
    for (const { table_name } of tables.rows) {
      const dump = await sql.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM "${table_name}" t`);
      rows += dump.rows.length;
      for (const { row } of dump.rows)
        for (const secret of secrets)
          expect(row.includes(secret), `${table_name} holds a credential in clear`).toBe(false);
    }
    expect(rows).toBeGreaterThan(50);
    for (const secret of secrets) expect(logs.includes(secret), 'a log line holds a credential in clear').toBe(false);
  });
});
