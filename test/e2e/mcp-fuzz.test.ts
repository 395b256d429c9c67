/**
 * Property-based fuzzing (fast-check) of the MCP endpoints of a real `plaza serve`: random JSON-RPC
 * messages, batches, wrong ids, random methods and params, non-JSON bodies, forged session ids,
 * on `/mcp`, `/mcp/p/<listed provider>`, `/mcp/p/platform` and an unknown provider, authenticated
 * as a real agent. Every answer is below 500, the process keeps serving, and its memory stays
 * bounded, huge params included.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runPlaza, type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { awaitHealthy, listProvider } from '../support/endpoints.ts';
import { type FaultUpstream, startFaultUpstream } from '../support/fault-upstreams.ts';
import { rssBytes } from '../support/processes.ts';

const id = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.double(),
  fc.boolean(),
  fc.object({ maxDepth: 1 }),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const method = fc.oneof(
  fc.constantFrom(
    'initialize',
    'notifications/initialized',
    'tools/list',
    'tools/call',
    'ping',
    'resources/list',
    'prompts/get',
    'logging/setLevel',
    'completion/complete',
    'notifications/cancelled',
    'tasks/result',
    'tasks/get',
  ),
  fc.string({ maxLength: 30 }),
);
const toolName = fc.oneof(
  fc.constantFrom('act', 'recorder__act', 'platform__account_auth_options', 'account_auth_options', 'nope__nope', ''),
  fc.string({ maxLength: 40 }),
);
const params = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      name: toolName,
      arguments: fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
      ),
      _meta: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.record({ platform: fc.jsonValue({ maxDepth: 2 }), progressToken: fc.oneof(fc.string(), fc.integer()) }),
      ),
      protocolVersion: fc.oneof(fc.constant('2025-06-18'), fc.string({ maxLength: 12 })),
      cursor: fc.string({ maxLength: 12 }),
      taskId: fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.constant(null), fc.object({ maxDepth: 1 })),
      task: fc.oneof(fc.record({ ttl: fc.integer() }), fc.jsonValue({ maxDepth: 1 })),
    },
    { requiredKeys: [] },
  ),
);
const message = fc.record(
  { jsonrpc: fc.oneof(fc.constant('2.0'), fc.string({ maxLength: 4 })), id, method, params },
  { requiredKeys: [] },
);
// Near-valid calls, so the fuzzer gets past validation to the upstream and back.
const call = fc.record({
  jsonrpc: fc.constant('2.0'),
  id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 })),
  method: fc.constant('tools/call'),
  params: fc.record(
    {
      name: fc.constantFrom('act', 'recorder__act'),
      arguments: fc.oneof(
        fc.record({ message: fc.string({ maxLength: 50 }) }),
        fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
      ),
      _meta: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.record({ platform: fc.jsonValue({ maxDepth: 2 }) })),
    },
    { requiredKeys: ['name'] },
  ),
});
const body = fc.oneof(
  { weight: 5, arbitrary: message.map((m) => JSON.stringify(m)) },
  { weight: 4, arbitrary: call.map((m) => JSON.stringify(m)) },
  { weight: 2, arbitrary: fc.array(message, { maxLength: 6 }).map((batch) => JSON.stringify(batch)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
);
const request = fc.record({
  path: fc.constantFrom('/mcp', '/mcp', '/mcp/p/recorder', '/mcp/p/recorder', '/mcp/p/platform', '/mcp/p/nope'),
  httpMethod: fc.constantFrom('POST', 'POST', 'POST', 'POST', 'GET', 'DELETE'),
  body,
  session: fc.option(fc.oneof(fc.string({ maxLength: 60 }), fc.constant('pss1.AAAA.BBBB')), {
    nil: undefined,
    freq: 3,
  }),
  accept: fc.constantFrom(
    'application/json, text/event-stream',
    'application/json, text/event-stream',
    'application/json',
    'text/event-stream',
    '*/*',
  ),
  contentType: fc.constantFrom('application/json', 'application/json', 'text/plain'),
});

describe('MCP endpoints under random input', () => {
  let plaza: ServerProcess;
  let upstream: FaultUpstream;
  let token = '';

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plaza-mcp-fuzz-'));
    upstream = await startFaultUpstream();
    plaza = await startPlazaServer({
      PLAZA_DATA_DIR: dataDir,
      PLAZA_BACKGROUND: '0',
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      PLAZA_GATEWAY_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'warn',
    });
    const created = await runPlaza(['accounts', 'create', '--email', 'fuzz@example.com'], { PLAZA_DATA_DIR: dataDir });
    const apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const agent = (await (
      await fetch(`${plaza.url}/api/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: 'Fuzz agent' }),
      })
    ).json()) as any;
    token = agent.data.token;
    const endpointId = await listProvider(plaza.url, {
      provider: 'recorder',
      url: upstream.url('ok'),
      registered_by: 'ops@example.com',
      agin_support: true,
      summary: 'Answers every call; no credentials.',
    });
    await awaitHealthy(plaza.url, endpointId);
  }, 60_000);
  afterAll(async () => {
    plaza?.child.kill('SIGKILL');
    await upstream?.close();
  });

  it('never answers 5xx to random JSON-RPC, batches, wrong ids and forged sessions', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await fetch(`${plaza.url}${r.path}`, {
          method: r.httpMethod,
          headers: {
            authorization: `Bearer ${token}`,
            accept: r.accept,
            'content-type': r.contentType,
            ...(r.session !== undefined ? { 'mcp-session-id': r.session.replace(/[^\x21-\x7e]/g, 'x') } : {}),
          },
          ...(r.httpMethod === 'POST' ? { body: r.body } : {}),
          signal: AbortSignal.timeout(10_000),
        });
        // GET opens an SSE stream when a session is valid; only the status matters here.
        if (r.httpMethod === 'GET' && res.status === 200) await res.body?.cancel();
        else await res.text();
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        expect(res.status, `${r.httpMethod} ${r.path} ${r.body.slice(0, 200)}`).toBeLessThan(500);
      }),
      { numRuns: 1_000 },
    );
    // Some calls got past validation to the provider. About 35 of the 1,000 do on average (30-40 in
    // three runs), a count of chance: 20 failed once in CI, 5 or fewer is a one-in-a-billion run.
    expect(upstream.seen.filter((x) => x.body.method === 'tools/call').length).toBeGreaterThan(5);
    expect((await fetch(`${plaza.url}/health`)).status).toBe(200);
    // The fuzzer did reach the handlers, not only the authentication wall.
    expect([...seen.keys()].some((status) => status === 200 || status === 202)).toBe(true);
  }, 120_000);

  it('answers non-JSON-RPC bodies on a passthrough itself with 400, forwarding nothing', async () => {
    const before = upstream.seen.length;
    for (const payload of [
      'null',
      '5',
      '"tools/call"',
      '[]',
      '[null]',
      '{"method":"tools/list","id":1}',
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},7]',
    ]) {
      const res = await fetch(`${plaza.url}/mcp/p/recorder`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: payload,
      });
      expect(res.status, payload).toBe(400);
      expect(((await res.json()) as any).error.code).toBe(-32600);
    }
    expect(upstream.seen.length).toBe(before);
  });

  it('keeps memory bounded under huge params and refuses bodies over the limit with 413', async () => {
    const pid = plaza.child.pid!;
    const before = rssBytes(pid);
    const huge = (size: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'act', arguments: { message: 'x'.repeat(size) } },
      });
    const post = (path: string, payload: string) =>
      fetch(`${plaza.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: payload,
      });
    for (let i = 0; i < 10; i++) {
      const near = await post(i % 2 ? '/mcp' : '/mcp/p/recorder', huge(900 * 1024));
      await near.text();
      expect(near.status).toBeLessThan(500);
      const over = await post('/mcp/p/recorder', huge(4 * 1024 * 1024));
      await over.text();
      expect(over.status).toBe(413);
    }
    const batch = JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })));
    const many = await post('/mcp', batch);
    await many.text();
    expect(many.status).toBeLessThan(500);
    expect(rssBytes(pid) - before, `RSS ${before >> 20} MiB -> ${rssBytes(pid) >> 20} MiB`).toBeLessThan(
      150 * 1024 * 1024,
    );
    expect((await fetch(`${plaza.url}/health`)).status).toBe(200);
  }, 60_000);
});
