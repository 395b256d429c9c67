/**
 * Pins automatic discovery (issue 3) against a local registry serving the official v0.1 format:
 * pages followed by `nextCursor` and `next_cursor`, only active streamable-http servers without URL
 * templates kept, deleted/non-active/SSE-only/templated ones not listed (and removed when they
 * turn so), required headers recorded as credential names, manual listings never overwritten,
 * incremental `updated_since`, adaptive interval, 429 Retry-After, the singleton lease, an
 * unmet tool search pulling sooner, and a removed or moved server's slug never going to another URL.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDiscovery, type Discovery } from '../../probes/index.ts';
import { createDiscoveryStore } from '../../src/marketplace/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const OFFICIAL = 'io.modelcontextprotocol.registry/official';
const meta = (status: string, isLatest = true) => ({
  [OFFICIAL]: { status, isLatest, publishedAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-02T00:00:00Z' },
});
const remote = (url: string, type = 'streamable-http', extra: Record<string, unknown> = {}) => ({
  type,
  url,
  ...extra,
});
const entry = (name: string, remotes: unknown[], status = 'active', extra: Record<string, unknown> = {}) => ({
  server: { name, description: `${name} server`, version: '1.0.0', remotes, ...extra },
  _meta: meta(status),
});

interface Registry {
  url: string;
  /** Pages by cursor ('' = first page). */
  pages: Map<string, unknown>;
  requests: URL[];
  tooMany: boolean;
  close(): Promise<void>;
}

async function startRegistry(): Promise<Registry> {
  const registry: Registry = { url: '', pages: new Map(), requests: [], tooMany: false, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://registry');
    registry.requests.push(url);
    if (registry.tooMany) return res.writeHead(429, { 'retry-after': '120' }).end();
    if (url.pathname !== '/v0.1/servers') return res.writeHead(404).end();
    const page = registry.pages.get(url.searchParams.get('cursor') ?? '') ?? { servers: [], metadata: {} };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  registry.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  registry.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return registry;
}

describe.each(BACKENDS)('MCP registry discovery on %s', (backend) => {
  let plaza: TestPlaza;
  let registry: Registry;
  // Ahead of the real clock, so the HTTP layer's real-time "pull sooner" visibly moves the schedule.
  const t0 = Date.parse('2030-01-01T12:00:00Z');
  let now = t0;
  const clock = { now: () => now };
  let discovery: Discovery;

  const endpoints = async () =>
    plaza.db.sql.query<{
      provider: string;
      url: string;
      source: string;
      registry_name: string | null;
      summary: string;
      required_credentials: unknown;
      registered_by: string;
    }>(
      `SELECT "provider", "url", "source", "registry_name", "summary", "required_credentials", "registered_by" FROM "mcp_endpoints" ORDER BY "url"`,
    );

  beforeAll(async () => {
    [plaza, registry] = await Promise.all([
      startTestPlaza(backend, { env: { PLAZA_BACKGROUND: '0', MCP_REGISTRY_URL: '' } }),
      startRegistry(),
    ]);
    discovery = createDiscovery({
      store: createDiscoveryStore(plaza.db.prisma),
      clock,
      log: plaza.log,
      registryUrl: registry.url,
      minIntervalMs: 60_000,
      initialIntervalMs: 300_000,
    });
    registry.pages.set('', {
      servers: [
        entry('io.github.acme/weather', [
          remote('https://weather.acme.example/mcp', 'streamable-http', {
            headers: [
              { name: 'X-API-Key', description: 'Your Acme key', isRequired: true, isSecret: true, value: '{api_key}' },
            ],
          }),
        ]),
        {
          server: { name: 'io.github.acme/weather', remotes: [remote('https://old.acme.example/mcp')] },
          _meta: meta('active', false),
        },
        entry('io.github.acme/sse-only', [remote('https://sse.acme.example/sse', 'sse')]),
        entry('com.example/templated', [remote('https://{tenant}.example.com/mcp')]),
      ],
      metadata: { nextCursor: 'p2', count: 4 },
    });
    registry.pages.set('p2', {
      servers: [
        entry('com.example/gone', [remote('https://gone.example.com/mcp')], 'deleted'),
        entry('com.example/old', [remote('https://old.example.com/mcp')], 'deprecated'),
        entry('org.example/maps', [remote('https://maps.example.org/mcp')]),
      ],
      metadata: { next_cursor: 'p3' },
    });
    registry.pages.set('p3', {
      servers: [
        {
          server: {
            name: 'org.example/notes',
            description: 'Notes',
            remotes: [remote('https://notes.example.org/mcp')],
          },
        },
      ],
      metadata: {},
    });
  });
  afterAll(async () => {
    await registry?.close();
    await plaza?.close();
  });

  it('pulls every page and lists only active, connectable streamable-http servers', async () => {
    // A manual listing of the same URL stays the publisher's.
    const manual = await fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: 'maps',
        url: 'https://maps.example.org/mcp',
        registered_by: 'maps@example.org',
        summary: 'Maps by hand',
      }),
    });
    expect(manual.status).toBe(201);

    const report = await discovery.pullIfDue();
    expect(report).toMatchObject({ pages: 3, created: 2, updated: 0, rateLimited: false });
    expect(registry.requests.map((u) => u.searchParams.get('cursor'))).toEqual([null, 'p2', 'p3']);
    expect(
      registry.requests.every((u) => u.searchParams.get('limit') === '100' && !u.searchParams.has('updated_since')),
    ).toBe(true);

    const rows = await endpoints();
    expect(rows.map((r) => [r.url, r.source])).toEqual([
      ['https://maps.example.org/mcp', 'manual'],
      ['https://notes.example.org/mcp', 'discovered'],
      ['https://weather.acme.example/mcp', 'discovered'],
    ]);
    const weather = rows.find((r) => r.registry_name === 'io.github.acme/weather')!;
    expect(weather).toMatchObject({
      provider: 'io-github-acme-weather',
      summary: 'io.github.acme/weather server',
      registered_by: `registry:${new URL(registry.url).host}`,
    });
    expect(weather.required_credentials).toEqual([{ name: 'X-API-Key', description: 'Your Acme key', required: true }]);
    expect(JSON.stringify(rows)).not.toContain('{api_key}');
    expect(rows.find((r) => r.url.includes('maps'))!.summary).toBe('Maps by hand');

    const listed = (await (await fetch(`${plaza.url}/api/mcp/endpoints?source=discovered`)).json()) as any;
    expect(listed.endpoints.map((e: any) => e.status)).toEqual(['registered', 'registered']);
  });

  it('waits for the shared schedule, then pulls incrementally and removes servers that were deleted', async () => {
    expect(await discovery.pullIfDue()).toBeUndefined();
    const other = createDiscovery({
      store: createDiscoveryStore(plaza.db.prisma),
      clock,
      log: plaza.log,
      registryUrl: registry.url,
    });
    expect(await other.pullIfDue()).toBeUndefined();

    registry.requests = [];
    registry.pages.set('', {
      servers: [
        entry('io.github.acme/weather', [remote('https://weather.acme.example/mcp')], 'deleted'),
        entry('org.example/notes', [remote('https://notes.example.org/mcp')]),
      ],
      metadata: {},
    });
    now += 150_001;
    const report = await discovery.pullIfDue();
    expect(report).toMatchObject({ pages: 1, removed: 1, updated: 1, nextInMs: 75_000 });
    expect(registry.requests[0]!.searchParams.get('updated_since')).toBe(new Date(t0 - 60_000).toISOString());
    expect((await endpoints()).map((r) => r.url)).toEqual([
      'https://maps.example.org/mcp',
      'https://notes.example.org/mcp',
    ]);

    // Nothing changed: the interval doubles.
    now += 75_001;
    expect((await discovery.pullIfDue())!.nextInMs).toBe(150_000);
  });

  it('honours 429 Retry-After', async () => {
    registry.tooMany = true;
    now += 150_001;
    const report = await discovery.pullIfDue();
    expect(report).toMatchObject({ rateLimited: true, nextInMs: 120_000 });
    now += 60_001;
    expect(await discovery.pullIfDue()).toBeUndefined();
    registry.tooMany = false;
  });

  it('pulls sooner when a tool search finds nothing', async () => {
    const until = async () =>
      Number(
        (
          await plaza.db.sql.query<{ ms: number }>(
            `SELECT extract(epoch FROM "until") * 1000 AS ms FROM "job_leases" WHERE "name" = 'mcp-discovery'`,
          )
        )[0]!.ms,
      );
    const before = await until();
    expect(before).toBeGreaterThan(Date.now() + 3_600_000);
    const res = await fetch(`${plaza.url}/api/mcp/tools?q=nonexistent-quantum-widget`);
    expect(((await res.json()) as any).tools).toEqual([]);
    let after = before;
    for (let i = 0; i < 50 && after === before; i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await until();
    }
    // The HTTP layer runs on the real clock: the next pull may start within a minute from now.
    expect(after).toBeLessThanOrEqual(Date.now() + 61_000);
  });

  it('stores a registry URL as a manual listing stores it, so one server is one listing however it is written', async () => {
    const store = createDiscoveryStore(plaza.db.prisma);
    const list = (url: string, provider: string) =>
      fetch(`${plaza.url}/api/mcp/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider, url, registered_by: 'ops@tools.example.net', summary: 'Tools by hand' }),
      });
    expect((await list('https://tools.example.net/mcp', 'tools-by-hand')).status).toBe(201);
    const server = (registryName: string, url: string) => ({
      registryName,
      provider: registryName.replace(/\W+/g, '-'),
      url,
      summary: '',
      requiredCredentials: [],
    });
    expect(
      await store.upsertDiscovered(
        [server('net.example/tools', 'HTTPS://Tools.Example.NET:443/%6Dcp?')],
        'registry:test',
        now,
      ),
    ).toEqual({ created: 0, updated: 0 });
    expect(
      await store.upsertDiscovered(
        [server('net.example/docs', 'https://Docs.Example.NET.:443/mcp#top')],
        'registry:test',
        now,
      ),
    ).toEqual({ created: 1, updated: 0 });
    expect((await list('https://docs.example.net/mcp', 'docs-by-hand')).status).toBe(409);
    const rows = (await endpoints()).filter((r) => r.url.includes('example.net/'));
    expect(rows.map((r) => [r.url, r.source])).toEqual([
      ['https://docs.example.net/mcp', 'discovered'],
      ['https://tools.example.net/mcp', 'manual'],
    ]);
  });

  it('never rebinds the slug of a removed or moved discovered server to another URL', async () => {
    const store = createDiscoveryStore(plaza.db.prisma);
    const server = (url: string) => ({
      registryName: 'com.example/crm',
      provider: 'com-example-crm',
      url,
      summary: 'CRM',
      requiredCredentials: [],
    });
    const provider = async (url: string) =>
      (
        await plaza.db.sql.query<{ provider: string }>(`SELECT "provider" FROM "mcp_endpoints" WHERE "url" = $1`, [url])
      )[0]?.provider;
    const list = (provider: string, url: string) =>
      fetch(`${plaza.url}/api/mcp/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider, url, registered_by: 'ops@evil.example', summary: 'Not the CRM' }),
      });
    expect(await store.upsertDiscovered([server('https://crm.example.com/mcp')], 'registry:test', now)).toEqual({
      created: 1,
      updated: 0,
    });
    expect(await provider('https://crm.example.com/mcp')).toBe('com-example-crm');

    // The registry entry moves: the new URL gets another slug, the old one stays with the old URL.
    expect(await store.upsertDiscovered([server('https://moved.example.com/mcp')], 'registry:test', now)).toEqual({
      created: 1,
      updated: 0,
    });
    expect(await provider('https://crm.example.com/mcp')).toBeUndefined();
    expect(await provider('https://moved.example.com/mcp')).toMatch(/^com-example-crm-[0-9a-f]{8}$/);
    expect((await list('com-example-crm', 'https://evil.example.com/mcp')).status).toBe(409);

    // Deleted from the registry: its slug is not free either.
    const moved = (await provider('https://moved.example.com/mcp'))!;
    expect(await store.removeDiscovered(['com.example/crm'], now)).toBe(1);
    const res = await list(moved, 'https://evil.example.com/mcp');
    expect(res.status).toBe(409);
    expect(((await res.json()) as any).message).toMatch(/slugs are never rebound to another server/);
    // Nor does another registry server get it.
    const other = {
      registryName: 'com-example/crm',
      provider: 'com-example-crm',
      url: 'https://other.example.com/mcp',
      summary: '',
      requiredCredentials: [],
    };
    expect(await store.upsertDiscovered([other], 'registry:test', now)).toEqual({ created: 1, updated: 0 });
    expect(await provider('https://other.example.com/mcp')).toMatch(/^com-example-crm-[0-9a-f]{8}$/);
    // The same server back at its old URL gets its old slug back.
    expect(await store.upsertDiscovered([server('https://crm.example.com/mcp')], 'registry:test', now)).toEqual({
      created: 1,
      updated: 0,
    });
    expect(await provider('https://crm.example.com/mcp')).toBe('com-example-crm');
  });

  it("never gives a discovered server the slug of Plaza's own provider", async () => {
    const store = createDiscoveryStore(plaza.db.prisma);
    const server = {
      registryName: 'platform',
      provider: 'platform',
      url: 'https://platform.example.net/mcp',
      summary: 'Not Plaza',
      requiredCredentials: [],
    };
    expect(await store.upsertDiscovered([server], 'registry:test', now)).toEqual({ created: 1, updated: 0 });
    const [row] = await plaza.db.sql.query<{ provider: string }>(
      `SELECT "provider" FROM "mcp_endpoints" WHERE "url" = $1`,
      [server.url],
    );
    expect(row!.provider).toMatch(/^platform-[0-9a-f]{8}$/);
    // Stable on the next pull.
    expect(await store.upsertDiscovered([server], 'registry:test', now)).toEqual({ created: 0, updated: 0 });
  });
});
