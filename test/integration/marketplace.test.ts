/**
 * Pins the MCP marketplace end to end (issue 3): listing registration (201/200/409, secrets
 * refused), probing a real server-everything at once, tools online with health and summary,
 * degraded → unreachable (hidden) when it stops and healthy again when it returns, loose
 * tools/list keeping `annotations.platform` across pages, vanished tools deleted, work leases,
 * demand, ranked search and pagination, and a clear 4xx for bad input on every route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDemandRecorder, createProber, type Prober } from '../../probes/index.ts';
import { startBackgroundWork } from '../../src/app/background.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createProbeStore } from '../../src/marketplace/index.ts';
import { BACKENDS } from '../support/databases.ts';
import {
  type EverythingServer,
  type FixtureProvider,
  startEverything,
  startFixtureProvider,
} from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const ENV = { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0', MCP_REGISTRY_URL: '' };

const listing = (over: Record<string, unknown> = {}) => ({
  provider: 'everything',
  url: 'http://127.0.0.1:1/mcp',
  registered_by: 'ops@example.com',
  agin_support: true,
  summary: 'Reference server: echo, sums, images. No credentials required. Logs agin_id + call_id.',
  ...over,
});

describe.each(BACKENDS)('MCP marketplace on %s', (backend) => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let prober: Prober;
  let endpointId: string;

  const post = (body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const get = async (path: string) => {
    const res = await fetch(`${plaza.url}${path}`);
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    [plaza, everything] = await Promise.all([startTestPlaza(backend, { env: ENV }), startEverything()]);
    prober = createProber({
      store: createProbeStore(plaza.db.prisma),
      clock: systemClock,
      log: plaza.log,
      baseIntervalS: 300,
      allowPrivateTargets: true,
      timeoutMs: 5_000,
    });
  });
  afterAll(async () => {
    await prober?.close();
    await everything?.stop();
    await plaza?.close();
  });

  /** The marketplace page's part between the endpoint table and the listing form, in `locale`. */
  const endpointsPart = async (locale: string) => {
    const html = await (
      await fetch(`${plaza.url}/marketplace?locale=${locale}`, { headers: { accept: 'text/html' } })
    ).text();
    return html.slice(html.indexOf('id="endpoints-title"'), html.indexOf('id="list-title"'));
  };

  it('says on the marketplace page that no endpoint is listed yet, in the page language', async () => {
    // Runs first: nothing is listed yet.
    expect(await endpointsPart('en')).toContain('No endpoint is listed yet.');
    expect(await endpointsPart('zh-CN')).toContain('还没有登记的端点。');
  });

  describe('POST /api/mcp/listings', () => {
    it('lists server-everything with status registered, probes it at once, and its tools go online', async () => {
      const res = await post(listing({ url: everything.url }));
      expect(res.status).toBe(201);
      const body: any = await res.json();
      expect(body).toMatchObject({
        provider: 'everything',
        url: everything.url,
        registrant: 'ops@example.com',
        source: 'manual',
        status: 'registered',
        created: true,
      });
      expect(body.id).toMatch(/^mcp_/);
      expect(body.links.self).toBe(`/api/mcp/endpoints/${body.id}`);
      expect(res.headers.get('location')).toBe(body.links.self);
      endpointId = body.id;

      let endpoint: any;
      for (let i = 0; i < 100; i++) {
        endpoint = (await get(`/api/mcp/endpoints/${endpointId}`)).body;
        if (endpoint.status !== 'registered') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(endpoint.status).toBe('healthy');
      expect(endpoint.tool_count).toBeGreaterThan(5);
      expect(endpoint.last_probe).toMatchObject({ ok: true, error: null });
      expect(endpoint.probes[0]).toMatchObject({
        ok: true,
        protocol_version: expect.any(String),
        server_info: { name: 'mcp-servers/everything' },
      });

      const tools = await get('/api/mcp/tools?provider=everything&limit=100');
      expect(tools.status).toBe(200);
      const echo = tools.body.tools.find((t: any) => t.tool === 'echo');
      expect(echo).toMatchObject({
        provider: 'everything',
        health: 'healthy',
        summary: 'Echoes back the input string',
        gateway_name: 'everything__echo',
      });
      expect(echo.input_schema).toMatchObject({ type: 'object', required: ['message'] });
      // MCP's title, outputSchema and execution, as server-everything publishes them.
      expect(echo).toMatchObject({ title: 'Echo Tool', output_schema: null, execution: { taskSupport: 'forbidden' } });
      const structured = tools.body.tools.find((t: any) => t.tool === 'get-structured-content');
      expect(structured).toMatchObject({
        title: 'Get Structured Content Tool',
        execution: { taskSupport: 'forbidden' },
      });
      expect(structured.output_schema).toMatchObject({
        type: 'object',
        required: ['temperature', 'conditions', 'humidity'],
        additionalProperties: false,
      });

      const catalog = await get('/api/mcp/catalog');
      expect(catalog.body.endpoint_count).toBe(1);
      expect(catalog.body.tool_count).toBe(endpoint.tool_count);
      expect(catalog.body.tools).toHaveLength(endpoint.tool_count);
      expect(catalog.body.endpoints[0]).toMatchObject({
        provider: 'everything',
        url: everything.url,
        registrant: 'ops@example.com',
      });
      // The marketplace page lists it in the endpoint table, without the empty-catalog line.
      const page = await endpointsPart('en');
      expect(page).toContain(`/marketplace/endpoints/${endpointId}`);
      expect(page).not.toContain('No endpoint is listed yet.');
    });

    it('answers 200 with the existing listing for the same URL and registrant, 409 for another', async () => {
      const again = await post(listing({ url: everything.url, registered_by: 'OPS@example.com' }));
      expect(again.status).toBe(200);
      expect(((await again.json()) as any).id).toBe(endpointId);
      const other = await post(listing({ url: everything.url, registered_by: 'someone@else.org' }));
      expect(other.status).toBe(409);
      expect(((await other.json()) as any).message).toMatch(/already listed/);
      // The same registrant under another slug is told where the server is listed, not handed it silently.
      const renamed = await post(listing({ url: everything.url, provider: 'everything-again' }));
      expect(renamed.status).toBe(409);
      expect(((await renamed.json()) as any).message).toBe(
        `This URL is already listed, as provider "everything" (${endpointId}); a server is listed once.`,
      );
      const slug = await post(listing({ url: 'http://127.0.0.1:2/mcp', registered_by: 'someone@else.org' }));
      expect(slug.status).toBe(409);
      expect(((await slug.json()) as any).message).toMatch(/Provider slug "everything"/);
    });

    it('answers the same new listing sent many times at once with one 201 and 200s, never a 409', async () => {
      const body = listing({ url: 'http://127.0.0.1:4/racer', provider: 'racer' });
      const answers = await Promise.all(
        Array.from({ length: 12 }, () =>
          post(body).then(async (res) => ({ status: res.status, body: (await res.json()) as any })),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      // Out of the way of the listing tests below.
      await plaza.db.prisma.mcpEndpoint.delete({ where: { id: answers[0]!.body.id } });
    });

    it("refuses the slug of Plaza's own provider with 409", async () => {
      const res = await post(listing({ provider: 'platform', url: 'http://127.0.0.1:3/mcp' }));
      expect(res.status).toBe(409);
      expect(((await res.json()) as any).message).toMatch(/"platform" is reserved/);
      expect((await get('/api/mcp/endpoints?provider=platform')).body.endpoints).toEqual([]);
    });

    it.each([
      ['URL userinfo', { url: 'https://user:pw@mcp.example.com/mcp' }, /credentials/],
      ['a token query parameter', { url: 'https://mcp.example.com/mcp?api_key=abc' }, /api_key.*credential/],
      ['an access_token parameter', { url: 'https://mcp.example.com/mcp?access_token=abc' }, /access_token/],
      [
        'a bearer token in the summary',
        { summary: 'Use Authorization: Bearer abcdefghijklmnop1234567890' },
        /summary.*bearer token/,
      ],
      ['an API key in the purpose', { purpose: 'key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX' }, /purpose.*API key/],
    ])('refuses %s with 400 and says why', async (_name, over, message) => {
      const res = await post(listing({ provider: 'secretive', ...over }));
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).message).toMatch(message);
    });

    it('accepts a placeholder for a credential and optional metadata', async () => {
      const res = await post(
        listing({
          provider: 'weather-co',
          url: 'http://127.0.0.1:3/mcp',
          summary: 'Forecasts für Städte 🌦. Requires Authorization: Bearer <THIRD_PARTY_TOKEN>.',
          audience: 'travel agents',
          required_credentials: ['WEATHER_TOKEN', { name: 'X-Region', description: 'region code', required: false }],
          purpose: 'weather lookups',
          risk: 'read-only',
        }),
      );
      expect(res.status).toBe(201);
      const body: any = await res.json();
      expect(body.required_credentials).toEqual([
        { name: 'WEATHER_TOKEN', required: true },
        { name: 'X-Region', description: 'region code', required: false },
      ]);
      expect(body.summary).toContain('Städte 🌦');
    });

    it.each([
      ['a missing provider', { provider: undefined }, /provider/],
      ['a bad provider slug', { provider: 'Bad_Slug' }, /provider/],
      ['a unicode provider slug', { provider: 'wetter-ß' }, /provider/],
      ['a non-http URL', { url: 'ftp://example.com/mcp' }, /url/],
      ['a wrong-typed agin_support', { agin_support: 'yes' }, /agin_support/],
      ['a registrant that is not e-mail-like', { registered_by: 'bob' }, /registered_by/],
      ['an empty summary', { summary: '' }, /summary/],
      ['an overlong summary', { summary: 'x'.repeat(5_000) }, /summary/],
      ['a NUL in the summary', { summary: 'a\u0000b' }, /summary/],
      ['an unknown field', { token: 'x' }, /unknown field/],
      [
        'credential objects with values',
        { required_credentials: [{ name: 'K', value: 'secret' }] },
        /required_credentials/,
      ],
      // Said by the alternative the value took (a name, an object), not as zod's "Invalid input".
      [
        'an overlong credential name',
        { required_credentials: ['ok', 'X'.repeat(101)] },
        /^Invalid listing: required_credentials\.1: at most 100 characters$/,
      ],
      [
        'an overlong credential object name',
        { required_credentials: [{ name: 'X'.repeat(101) }] },
        /^Invalid listing: required_credentials\.0\.name: at most 100 characters$/,
      ],
      [
        'a credential that is neither a name nor an object',
        { required_credentials: [7] },
        /^Invalid listing: required_credentials\.0: /,
      ],
    ])('answers 400 for %s', async (_name, over, message) => {
      const res = await post(listing({ provider: 'bad-input', ...over }));
      expect(res.status).toBe(400);
      const body: any = await res.json();
      expect(body).toMatchObject({ success: false, code: 'bad_request' });
      expect(body.message).toMatch(message);
    });

    it('answers 4xx for a 1 MB summary, a non-object body, malformed JSON and a wrong content type', async () => {
      expect((await post(listing({ summary: 'x'.repeat(1024 * 1024) }))).status).toBe(413);
      expect((await post([1, 2])).status).toBe(400);
      const nullBody = await post('null');
      expect(nullBody.status).toBe(400);
      // Said as what it is, not as missing fields of an empty object.
      expect(((await nullBody.json()) as { message: string }).message).toMatch(/JSON object/);
      expect((await post('{"provider":')).status).toBe(400);
      expect((await post(JSON.stringify(listing()), { 'content-type': 'text/plain' })).status).toBe(415);
      // A lone surrogate (the json column refused it: a 500) and a registrant that lower-cases past 254.
      for (const over of [
        { required_credentials: ['x\ud800'] },
        { required_credentials: [{ name: 'ok', description: '\udc00' }] },
        { summary: 's\ud800x' },
        { registered_by: `${'İ'.repeat(240)}@x.io` },
      ]) {
        const res = await post(listing({ ...over, url: `http://127.0.0.1:1/odd-${Object.keys(over)[0]}` }));
        expect(res.status, JSON.stringify(over).slice(0, 60)).toBe(400);
      }
    });

    it('refuses loopback and private targets when they are not allowed', async () => {
      const strict = await startTestPlaza(backend, { db: plaza.db, env: { ...ENV, PLAZA_ALLOW_PRIVATE_TARGETS: '0' } });
      try {
        for (const url of [
          'http://127.0.0.1:9000/mcp',
          'http://10.0.0.1/mcp',
          'http://169.254.169.254/',
          'http://[::1]:9000/mcp',
          'http://localhost:9000/mcp',
        ]) {
          const res = await fetch(`${strict.url}/api/mcp/listings`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(listing({ provider: 'internal', url })),
          });
          expect(res.status, url).toBe(400);
          const message = ((await res.json()) as any).message as string;
          expect(message, url).toMatch(/Refused to connect/);
          // Loopback and private targets say how a developer allows them; metadata never is.
          if (url.includes('169.254.169.254')) expect(message, url).not.toContain('PLAZA_ALLOW_PRIVATE_TARGETS');
          else expect(message, url).toContain('PLAZA_ALLOW_PRIVATE_TARGETS=1');
        }
      } finally {
        await strict.close();
      }
    });
  });

  describe('GET /api/mcp/tools', () => {
    it('ranks a tool-name match first and searches descriptions and providers', async () => {
      const echo = await get('/api/mcp/tools?q=echo');
      expect(echo.body.tools[0].tool).toBe('echo');
      const byDescription = await get('/api/mcp/tools?q=echoes%20input');
      expect(byDescription.body.tools.map((t: any) => t.tool)).toEqual(['echo']);
      const byProvider = await get('/api/mcp/tools?q=everyth&limit=100');
      expect(byProvider.body.count).toBeGreaterThan(5);
    });

    it('pages with a stable order and cursor', async () => {
      const all = (await get('/api/mcp/tools?limit=100')).body.tools.map((t: any) => t.tool);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(`/api/mcp/tools?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.tools.map((t: any) => t.tool));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(all);
      const first = await get('/api/mcp/tools?q=get&limit=2');
      const second = await get(`/api/mcp/tools?q=get&limit=2&cursor=${first.body.next_cursor}`);
      expect(second.body.tools[0].tool).not.toBe(first.body.tools[0].tool);
    });

    it.each([
      ["q=' OR 1=1; DROP TABLE mcp_tools; --", 200],
      ['q=%00%27%22%5C', 200],
      ['q=%E2%9C%93%F0%9F%98%80', 200],
      ['q=a&q=b', 400],
      ['limit=abc', 400],
      ['limit=0', 400],
      ['limit=1000', 400],
      ['provider=NOT%20A%20SLUG', 400],
      ['cursor=not-a-cursor', 400],
      ['sort=name', 400],
    ])('answers %s with %i, never 5xx', async (query, status) => {
      const res = await get(`/api/mcp/tools?${query}`);
      expect(res.status).toBe(status);
      if (status === 200) expect(res.body.tools).toEqual([]);
      else expect(res.body.message).toMatch(/Invalid (query|cursor)/);
    });
  });

  describe('GET /api/mcp/endpoints', () => {
    it('lists registered servers with source, status, last probe and tool count, paged', async () => {
      const first = await get('/api/mcp/endpoints?limit=1');
      expect(first.body.endpoints).toHaveLength(1);
      expect(first.body.endpoints[0]).toMatchObject({
        provider: 'everything',
        source: 'manual',
        status: 'healthy',
        tool_count: expect.any(Number),
      });
      const second = await get(`/api/mcp/endpoints?limit=1&cursor=${first.body.next_cursor}`);
      expect(second.body.endpoints[0].provider).toBe('weather-co');
      expect((await get('/api/mcp/endpoints?status=registered')).body.endpoints.map((e: any) => e.provider)).toEqual([
        'weather-co',
      ]);
    });

    it.each(['status=bogus', 'limit=-1', 'source=elsewhere', 'cursor=%%%'])('answers 400 for %s', async (query) => {
      expect((await get(`/api/mcp/endpoints?${query}`)).status).toBe(400);
    });

    it.each(['mcp_doesnotexist000', 'x%00y', "1'%20OR%20'1'='1"])('answers 404 for the unknown id %s', async (id) => {
      const res = await get(`/api/mcp/endpoints/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    });
  });

  describe('probing', () => {
    it('degrades, then hides an endpoint that stopped answering, and brings it back when it returns', async () => {
      await everything.stop();
      const statuses: string[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await prober.probeNow(endpointId))!.status);
      expect(statuses).toEqual(['healthy', 'degraded', 'degraded', 'unreachable']);
      expect((await get('/api/mcp/tools?provider=everything')).body.tools).toEqual([]);
      const endpoint = (await get(`/api/mcp/endpoints/${endpointId}`)).body;
      expect(endpoint.status).toBe('unreachable');
      expect(endpoint.last_probe.ok).toBe(false);
      expect(endpoint.last_probe.error).toMatch(/ECONNREFUSED|fetch failed/);
      expect(endpoint.probes.slice(0, 4).every((p: any) => p.ok === false)).toBe(true);

      everything = await startEverything(everything.port);
      expect((await prober.probeNow(endpointId))!.status).toBe('degraded');
      expect((await get('/api/mcp/tools?provider=everything')).body.tools[0].health).toBe('degraded');
      expect((await prober.probeNow(endpointId))!.status).toBe('healthy');
      expect((await get('/api/mcp/tools?provider=everything')).body.tools[0].health).toBe('healthy');
    });

    describe('with a provider publishing annotations.platform', () => {
      let fixture: FixtureProvider;
      let id: string;
      beforeAll(async () => {
        fixture = await startFixtureProvider([
          [
            {
              name: 'book_room',
              description: 'Books a meeting room.',
              inputSchema: {
                type: 'object',
                required: ['start'],
                properties: { start: { type: 'string', format: 'date-time' } },
              },
              annotations: { platform: { requires_agin: true, caller_identity: 'AGIN card of the booking agent' } },
            },
          ],
          [{ name: 'list_rooms', description: 'Lists rooms.', inputSchema: { type: 'object' } }],
        ]);
        const res = await post(listing({ provider: 'rooms', url: fixture.url }));
        id = ((await res.json()) as any).id;
        for (let i = 0; i < 100 && (await get(`/api/mcp/endpoints/${id}`)).body.status === 'registered'; i++)
          await new Promise((r) => setTimeout(r, 50));
      });
      afterAll(() => fixture?.close());

      it('keeps annotations.platform and reads every page', async () => {
        const tools = (await get('/api/mcp/tools?provider=rooms')).body.tools;
        expect(tools.map((t: any) => t.tool)).toEqual(['book_room', 'list_rooms']);
        expect(tools[0].annotations.platform).toEqual({
          requires_agin: true,
          caller_identity: 'AGIN card of the booking agent',
        });
        expect(tools[0]).toMatchObject({ requires_agin: true, caller_identity: 'AGIN card of the booking agent' });
        expect(tools[0].input_schema.properties.start.format).toBe('date-time');
      });

      it('deletes tools that vanished, and an answer without tools makes it a registered candidate', async () => {
        fixture.pages = [[{ name: 'list_rooms', description: 'Lists all rooms.' }]];
        await prober.probeNow(id);
        const tools = (await get('/api/mcp/tools?provider=rooms')).body.tools;
        expect(tools.map((t: any) => [t.tool, t.description])).toEqual([['list_rooms', 'Lists all rooms.']]);
        fixture.pages = [[]];
        expect((await prober.probeNow(id))!.status).toBe('registered');
        expect((await get('/api/mcp/tools?provider=rooms')).body.tools).toEqual([]);
        expect((await get(`/api/mcp/endpoints/${id}`)).body.tool_count).toBe(0);
      });

      it('stores tools whose text holds NUL or lone surrogates, and skips names it could not route and JSON nested too deep', async () => {
        // Before, one NUL from the provider failed every probe write: the endpoint kept its old
        // state and tools for good.
        const deep: Record<string, unknown> = {};
        let at = deep;
        for (let i = 0; i < 100; i++) at = (at['x'] = {}) as Record<string, unknown>;
        fixture.pages = [
          [
            {
              name: 'odd_text',
              description: 'Nul \u0000 and a lone \ud800 here.',
              inputSchema: { type: 'object', properties: { 'k\u0000': { description: '\udc00' } } },
              annotations: { platform: { caller_identity: 'a\u0000b' } },
            },
            { name: 'bad\u0000name', description: 'Cannot be routed.' },
            { name: 'too_deep', inputSchema: { type: 'object', properties: deep } },
          ],
        ];
        const health = await prober.probeNow(id);
        expect(health!.status).not.toBe('unreachable');
        const tools = (await get('/api/mcp/tools?provider=rooms')).body.tools;
        expect(tools.map((t: any) => t.tool)).toEqual(['odd_text']);
        expect(tools[0]).toMatchObject({
          description: 'Nul \ufffd and a lone \ufffd here.',
          input_schema: { type: 'object', properties: { 'k\ufffd': { description: '\ufffd' } } },
          caller_identity: 'a\ufffdb',
        });
      });

      it("keeps a tool's title, outputSchema and execution in the shape MCP gives them, drops one that is not, and follows a changed title", async () => {
        const shaped = {
          name: 'shaped',
          title: `Shaped \u0000 ${'t'.repeat(2_000)}`,
          inputSchema: { type: 'object' },
          outputSchema: { type: 'object', properties: { n: { type: 'number' } } },
          execution: { taskSupport: 'optional' },
        };
        fixture.pages = [
          [
            shaped,
            {
              name: 'misshapen',
              title: 7,
              inputSchema: { type: 'object' },
              outputSchema: { type: 'string' },
              execution: { taskSupport: 'sometimes' },
            },
          ],
        ];
        await prober.probeNow(id);
        const tools = (await get('/api/mcp/tools?provider=rooms')).body.tools;
        expect(tools.map((t: any) => t.tool)).toEqual(['misshapen', 'shaped']);
        expect(tools[0]).toMatchObject({ title: null, output_schema: null, execution: null });
        expect(tools[1]).toMatchObject({
          output_schema: { type: 'object', properties: { n: { type: 'number' } } },
          execution: { taskSupport: 'optional' },
        });
        // Cut to 1,000 characters, its NUL made storable.
        expect(tools[1].title).toBe(`Shaped \ufffd ${'t'.repeat(991)}`);
        fixture.pages = [[{ ...shaped, title: 'Shaped again' }]];
        await prober.probeNow(id);
        expect((await get('/api/mcp/tools?provider=rooms')).body.tools.map((t: any) => t.title)).toEqual([
          'Shaped again',
        ]);
      });
    });

    it('leases due endpoints so two probers never probe the same one', async () => {
      await plaza.db.sql.query(`UPDATE "mcp_endpoints" SET "next_probe_at" = now() - interval '1 minute'`);
      const count = async (table: string) =>
        (await plaza.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}"`))[0]!.n;
      const before = await count('probe_runs');
      const endpoints = await count('mcp_endpoints');
      const other = createProber({
        store: createProbeStore(plaza.db.prisma),
        clock: systemClock,
        log: plaza.log,
        baseIntervalS: 300,
        allowPrivateTargets: true,
        timeoutMs: 3_000,
      });
      const [a, b] = await Promise.all([prober.runDue(2), other.runDue(2)]);
      await other.close();
      expect(a.length + b.length).toBe(endpoints);
      expect(new Set([...a, ...b].map((r) => r.endpointId)).size).toBe(endpoints);
      expect((await count('probe_runs')) - before).toBe(endpoints);
      const rows = await plaza.db.sql.query<{ lease_owner: string | null; due: boolean }>(
        `SELECT "lease_owner", "next_probe_at" <= now() AS due FROM "mcp_endpoints"`,
      );
      expect(rows.every((r) => r.lease_owner === null && r.due === false)).toBe(true);
      expect(await prober.runDue()).toEqual([]);
    });

    it('demand raises the score and brings the next probe forward', async () => {
      await plaza.db.sql.query(
        `UPDATE "mcp_endpoints" SET "next_probe_at" = now() + interval '1 day', "demand_score" = 0 WHERE "id" = $1`,
        [endpointId],
      );
      const demand = createDemandRecorder({
        store: createProbeStore(plaza.db.prisma),
        clock: systemClock,
        log: plaza.log,
        soonestMs: 30_000,
      });
      demand.recordDemand(endpointId);
      demand.recordDemand(endpointId, 2);
      await demand.close();
      const [row] = await plaza.db.sql.query<{ demand_score: number; soon: boolean }>(
        `SELECT "demand_score", "next_probe_at" <= now() + interval '31 seconds' AS soon FROM "mcp_endpoints" WHERE "id" = $1`,
        [endpointId],
      );
      expect(row).toEqual({ demand_score: 3, soon: true });
    });

    it("shows what the server's own probe loop found in the very next tool search", async () => {
      const fixture = await startFixtureProvider([[{ name: 'loopfound', inputSchema: { type: 'object' } }]]);
      const id = 'mcp_loopfound000000';
      await plaza.db.prisma.mcpEndpoint.create({
        data: {
          id,
          provider: 'loop-found',
          url: fixture.url,
          registeredBy: 'ops@example.com',
          status: 'registered',
          nextProbeAt: new Date(),
        },
      });
      // The index has just looked: a probe made elsewhere would only show after its next catch-up.
      expect((await get('/api/mcp/tools?q=loopfound')).body.tools).toEqual([]);
      const background = startBackgroundWork({
        db: plaza.db,
        config: { ...plaza.config, background: true },
        log: plaza.log,
        probeStore: plaza.marketplace.probeStore,
      });
      try {
        await expect
          .poll(async () => (await plaza.db.prisma.mcpEndpoint.findUnique({ where: { id } }))?.status, {
            timeout: 10_000,
            interval: 50,
          })
          .toBe('healthy');
        expect((await get('/api/mcp/tools?q=loopfound')).body.tools.map((t: any) => t.gateway_name)).toEqual([
          'loop-found__loopfound',
        ]);
      } finally {
        await background.stop();
        await fixture.close();
      }
    });
  });
});
