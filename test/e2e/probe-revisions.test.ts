/**
 * Pins "probes speak what the server speaks" (issue 33, item 3) through a real Plaza: listed
 * through POST /api/mcp/listings and probed as Plaza probes a new listing, an SDK v2 server that
 * speaks only MCP 2026-07-28 comes online (its tools, every page of them, in /api/mcp/tools), one
 * with the SDK's fallback for earlier clients is recorded with both revisions, and the SDK v1 server
 * and server-everything (which know no server/discover) still come online through initialize. The
 * catalog API and the marketplace pages show each endpoint's revisions and capabilities.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import {
  type EverythingServer,
  type SdkUpstream,
  startEverything,
  startSdkUpstream,
} from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SdkV2Upstream, startSdkV2Upstream } from '../support/sdk-v2-upstream.ts';

const ENV = { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0', MCP_REGISTRY_URL: '' };
const PAGES = [
  [{ name: 'forecast', description: 'Tomorrow.' }],
  [{ name: 'alerts', description: 'Warnings.' }],
  [{ name: 'radar', description: 'Rain.' }],
];

describe.each(BACKENDS)('probes in the revision each server speaks, on %s', (backend) => {
  let plaza: TestPlaza;
  let only2026: SdkV2Upstream;
  let withFallback: SdkV2Upstream;
  let v1: SdkUpstream;
  let everything: EverythingServer;
  /** Endpoint ids by provider slug. */
  const ids = new Map<string, string>();

  const get = async (path: string) => {
    const res = await fetch(`${plaza.url}${path}`);
    expect(res.status).toBe(200);
    return res.headers.get('content-type')?.startsWith('application/json')
      ? ((await res.json()) as any)
      : await res.text();
  };

  beforeAll(async () => {
    [plaza, only2026, withFallback, v1, everything] = await Promise.all([
      startTestPlaza(backend, { env: ENV }),
      startSdkV2Upstream({ legacy: 'reject', pages: PAGES, name: 'weather-2026' }),
      startSdkV2Upstream({ legacy: 'stateless', pages: [[{ name: 'both', description: 'Either revision.' }]] }),
      startSdkUpstream(),
      startEverything(),
    ]);
    const listings = {
      'weather-2026': only2026.url,
      'dual-era': withFallback.url,
      'sdk-v1': v1.url,
      everything: everything.url,
    };
    for (const [provider, url] of Object.entries(listings)) {
      const res = await fetch(`${plaza.url}/api/mcp/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider, url, registered_by: 'ops@example.com', summary: `${provider} test server` }),
      });
      expect(res.status).toBe(201);
      ids.set(provider, ((await res.json()) as { id: string }).id);
    }
    // A new listing is probed at once; wait until every first probe has answered.
    for (const id of ids.values()) {
      for (let i = 0; i < 400 && (await get(`/api/mcp/endpoints/${id}`)).last_probe === null; i++)
        await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(async () => {
    await Promise.all([plaza?.close(), only2026?.close(), withFallback?.close(), v1?.close(), everything?.stop()]);
  });

  it('brings a 2026-only server online: every page of its tools in /api/mcp/tools, its revision in the catalog', async () => {
    const tools = (await get('/api/mcp/tools?provider=weather-2026')).tools as { name: string }[];
    expect(tools.map((t) => t.name).sort()).toEqual(['alerts', 'forecast', 'radar']);
    const endpoint = await get(`/api/mcp/endpoints/${ids.get('weather-2026')}`);
    expect(endpoint).toMatchObject({
      status: 'healthy',
      tool_count: 3,
      protocol_versions: ['2026-07-28'],
      capabilities: { tools: { listChanged: true }, resources: {} },
    });
    expect(endpoint.probes[0]).toMatchObject({
      ok: true,
      protocol_version: '2026-07-28',
      server_info: { name: 'weather-2026' },
    });
    // Each tools/list carried what a 2026-07-28 request needs, and no request opened a session.
    const lists = only2026.seen.filter((s) => s.method === 'tools/list');
    expect(lists.map((s) => s.params?.['cursor'])).toEqual([undefined, '1', '2']);
    for (const s of lists) {
      expect(s.status).toBe(200);
      expect(s.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
      expect(s.meta).toMatchObject({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      });
    }
    expect(only2026.seen.some((s) => s.headers['mcp-session-id'] !== undefined)).toBe(false);
  });

  it('records both revisions of an SDK v2 server with the fallback, and the one revision of servers before 2026-07-28', async () => {
    const { endpoints } = await get('/api/mcp/endpoints?limit=10');
    const revisions = Object.fromEntries(
      (endpoints as { provider: string; protocol_versions: string[] }[]).map((e) => [e.provider, e.protocol_versions]),
    );
    expect(revisions).toEqual({
      'weather-2026': ['2026-07-28'],
      'dual-era': ['2026-07-28', LATEST_PROTOCOL_VERSION],
      'sdk-v1': [LATEST_PROTOCOL_VERSION],
      everything: [LATEST_PROTOCOL_VERSION],
    });
    const catalog = await get('/api/mcp/catalog');
    expect(
      (catalog.endpoints as { provider: string; protocol_versions: string[] }[]).find((e) => e.provider === 'dual-era')!
        .protocol_versions,
    ).toEqual(['2026-07-28', LATEST_PROTOCOL_VERSION]);
    // The servers before 2026-07-28 answered server/discover with an error, then initialize.
    expect(v1.seen.map((s) => s.body?.method ?? s.method).slice(0, 2)).toEqual(['server/discover', 'initialize']);
    expect((await get('/api/mcp/tools?provider=everything')).tools.length).toBeGreaterThan(0);
    expect((await get('/api/mcp/tools?provider=sdk-v1')).tools.map((t: { name: string }) => t.name)).toContain('echo');
  });

  it("shows each endpoint's revisions on the marketplace and its capabilities on the endpoint page", async () => {
    const market = await get('/marketplace');
    expect(market).toContain('<th scope="col">MCP revisions</th>');
    expect(market).toContain('<td class="revisions" data-label="MCP revisions">MCP 2026-07-28</td>');
    expect(market).toContain(
      `<td class="revisions" data-label="MCP revisions">MCP 2026-07-28, ${LATEST_PROTOCOL_VERSION}</td>`,
    );
    const page = await get(`/marketplace/endpoints/${ids.get('weather-2026')}`);
    expect(page).toContain('<dt>MCP revisions</dt><dd>MCP 2026-07-28</dd>');
    expect(page).toContain('<dt>MCP capabilities</dt><dd>tools, resources</dd>');
  });
});
