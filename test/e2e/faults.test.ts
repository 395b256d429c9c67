/**
 * Faults against real `plaza serve` processes, each bounded and stopping by itself:
 * - upstream faults through the gateway (connection refused, hang, slow drip, malformed JSON-RPC,
 *   SSE cut mid-stream, a 50 MB answer): an error result within the gateway timeout, an `error`
 *   receipt, and bounded process memory; answers that are no usable result (a malformed error,
 *   `error: null`, HTTP 202, a number, unknown content, JSON 100,000 levels deep): an error to the
 *   caller and exactly one `error` receipt, on `/mcp/p/…` and on `/mcp`;
 * - SIGTERM during gateway load: in-flight calls finish, the process exits 0, and after a restart
 *   there is exactly one receipt per call that returned a result;
 * - SIGTERM with an MCP client idle on its notification stream: the stream is ended, not waited
 *   for until PLAZA_SHUTDOWN_TIMEOUT_MS;
 * - Redis stopped and started again (a private `redis-server`, when installed): requests keep
 *   working on per-instance limits with a logged warning, and counting goes back to Redis.
 * - PostgreSQL dropping every connection and refusing new ones for 2 s during gateway load, and
 *   SIGKILL during load (sync receipts): every call whose result reached the client has exactly one
 *   receipt afterwards (only when TEST_DATABASE_URL is set). A real server restart is in
 *   pg-restart.test.ts.
 * The rest runs on embedded storage (PGlite), so it runs everywhere.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { type IncomingMessage, request } from 'node:http';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { randomToken } from '../../src/kernel/index.ts';
import { startChild } from '../support/children.ts';
import { freePort, type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { createPostgresDatabase } from '../support/databases.ts';
import {
  type FaultUpstream,
  FLOOD_BYTES,
  ODD_ANSWERS,
  OTHER_FAILURES,
  startFaultUpstream,
} from '../support/fault-upstreams.ts';
import {
  callTool,
  gatewayLoad,
  listHealthy,
  receiptCounts,
  startGatewayPlaza as startGatewayPlazaProcess,
} from '../support/gateway-load.ts';
import { startSdkUpstream } from '../support/mcp-upstreams.ts';
import { rssBytes } from '../support/processes.ts';

const GATEWAY_TIMEOUT_MS = 3_000;
const HAS_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;

/** A Plaza on its own embedded database with an account and an agent. */
const startGatewayPlaza = (env: Record<string, string> = {}) => startGatewayPlazaProcess(env, GATEWAY_TIMEOUT_MS);

async function receiptsOf(plazaUrl: string, apiKey: string, query: string): Promise<any[]> {
  const res = await fetch(`${plazaUrl}/api/receipts?${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).data.receipts;
}

describe('upstream faults through the gateway', () => {
  let upstream: FaultUpstream;
  let plaza: Awaited<ReturnType<typeof startGatewayPlaza>>;

  beforeAll(async () => {
    upstream = await startFaultUpstream();
    plaza = await startGatewayPlaza();
    for (const mode of [
      'hang',
      'drip',
      'malformed',
      'sse-cut',
      'huge',
      'gated-call',
      'echo-credential',
      'flood',
      'big-numbers',
      'forge-get',
      'guessed-after',
      'other-forged',
      ...OTHER_FAILURES,
      ...ODD_ANSWERS,
    ] as const)
      await listHealthy(plaza.server.url, `f-${mode}`, upstream.url(mode));
    // Connection refused: a provider that answered its probe and is gone now.
    const gone = await startFaultUpstream();
    await listHealthy(plaza.server.url, 'f-refused', gone.url('ok'));
    await gone.close();
  }, 60_000);
  afterAll(async () => {
    plaza?.server.child.kill('SIGKILL');
    await upstream?.close();
  });

  it.each(['refused', 'hang', 'drip', 'malformed', 'sse-cut'])(
    'answers %s with an error result in time and an error receipt',
    async (mode) => {
      const answer = await callTool(plaza.server.url, plaza.agentToken, `f-${mode}`, { message: mode });
      expect(answer.ms).toBeLessThan(GATEWAY_TIMEOUT_MS + 2_000);
      expect(answer.status).toBe(200);
      expect(answer.message?.result?.isError ?? Boolean(answer.message?.error)).toBe(true);
      const receipts = await receiptsOf(plaza.server.url, plaza.apiKey, `provider=f-${mode}`);
      expect(receipts.map((r) => r.status)).toEqual(['error']);
    },
  );

  it('says where the credential goes when a provider answers a call 401, through /mcp/p and /mcp, and passes one that is sent', async () => {
    const viaAggregate = async (headers: Record<string, string>) => {
      const res = await fetch(`${plaza.server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${plaza.agentToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'f-gated-call__act', arguments: {} },
        }),
      });
      return ((await res.json()) as any).result;
    };
    const forGated = { 'x-platform-upstream-provider': 'f-gated-call' };
    const none = await callTool(plaza.server.url, plaza.agentToken, 'f-gated-call');
    expect(none.message.result.isError).toBe(true);
    expect(none.message.result.content[0].text).toMatch(
      /needs a credential of its own \(HTTP 401\): send it as X-PLATFORM-Upstream-Authorization/,
    );
    expect((await viaAggregate({})).content[0].text).toMatch(
      /needs a credential of its own \(HTTP 401\): send it as X-PLATFORM-Upstream-Authorization/,
    );
    const wrong = { 'x-platform-upstream-authorization': 'Bearer nope' };
    expect(
      (await callTool(plaza.server.url, plaza.agentToken, 'f-gated-call', {}, wrong)).message.result.content[0].text,
    ).toMatch(/refused the credential sent as X-PLATFORM-Upstream-Authorization/);
    expect((await viaAggregate({ ...wrong, ...forGated })).content[0].text).toMatch(
      /refused the credential sent as X-PLATFORM-Upstream-Authorization/,
    );
    const right = { 'x-platform-upstream-authorization': 'Bearer call-secret' };
    expect(
      (await callTool(plaza.server.url, plaza.agentToken, 'f-gated-call', {}, right)).message.result.content[0].text,
    ).toBe('ok: let in');
    expect((await viaAggregate({ ...right, ...forGated })).content[0].text).toBe('ok: let in');
    // On /mcp a credential goes only to the provider it is named for: any other gets none.
    expect((await viaAggregate({ ...right, 'x-platform-upstream-provider': 'someone-else' })).content[0].text).toMatch(
      /needs a credential of its own .*X-PLATFORM-Upstream-Provider/,
    );
  });

  it('refuses a third-party credential on /mcp that names no provider, instead of sending it to every provider called', async () => {
    for (const provider of [undefined, '', 'Not A Slug']) {
      const res = await fetch(`${plaza.server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${plaza.agentToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-platform-upstream-authorization': 'Bearer call-secret',
          ...(provider === undefined ? {} : { 'x-platform-upstream-provider': provider }),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'f-gated-call__act', arguments: {} },
        }),
      });
      expect(res.status, String(provider)).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toMatch(/X-PLATFORM-Upstream-Provider/);
    }
  });

  it('reads a notification stream no faster than its client: a client that stops reading holds the upstream, not Plaza memory; the stream may outgrow the answer limit', async () => {
    // A GET stream lasts as long as the upstream's: only a POST's answer is bounded as a whole.
    expect(FLOOD_BYTES).toBeGreaterThan(32 * 1024 * 1024);
    const opened = new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        `${plaza.server.url}/mcp/p/f-flood`,
        { headers: { authorization: `Bearer ${plaza.agentToken}`, accept: 'text/event-stream' } },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
    const res = await opened;
    expect(res.statusCode).toBe(200);
    res.pause();
    // Socket buffers on both sides hold a few MiB; without back-pressure the whole stream would
    // pass into Plaza's memory within moments.
    await new Promise((r) => setTimeout(r, 1_500));
    const held = upstream.flood.sent;
    expect(held).toBeLessThan(FLOOD_BYTES / 2);
    // Reading again lets the rest through.
    let received = 0;
    res.on('data', (chunk: Buffer) => (received += chunk.length));
    res.resume();
    await expect.poll(() => upstream.flood.sent, { timeout: 20_000 }).toBeGreaterThanOrEqual(FLOOD_BYTES);
    await expect.poll(() => received, { timeout: 20_000 }).toBeGreaterThanOrEqual(FLOOD_BYTES);
    res.destroy();
  });

  it('passes integers past 2^53 through /mcp as written, and refuses what /mcp/p refuses: ids past 2^53, an empty batch, an id-less tools/call, ids twice in a batch', async () => {
    const post = (body: string) =>
      fetch(`${plaza.server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${plaza.agentToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body,
      });
    const answered = await post(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"f-big-numbers__act","arguments":{"big":9007199254740993123}}}',
    );
    expect(answered.status).toBe(200);
    const text = await answered.text();
    expect(text).toContain('"n":123456789012345678901234567890');
    expect(text).toContain('"id":9007199254740993123');
    expect(
      upstream.seen.filter((r) => r.path === '/big-numbers/mcp' && r.body.method === 'tools/call').at(-1)!.raw,
    ).toContain('"big":9007199254740993123');

    // A message too deep for the SDK's validator to walk (a client's answer, say) is refused in words.
    const deep = await post(`{"jsonrpc":"2.0","id":3,"result":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`);
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as any).error.message).toBe('Request body nests deeper than 256 levels.');
    const call = (id: unknown) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'f-big-numbers__act', arguments: {} },
    });
    const before = (await receiptsOf(plaza.server.url, plaza.apiKey, 'provider=f-big-numbers')).length;
    for (const [body, why] of [
      [
        '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"f-big-numbers__act","arguments":{}}}',
        /at most 2\^53/,
      ],
      ['[]', /empty batch/],
      [
        JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'f-big-numbers__act', arguments: {} } }),
        /must be a request with an id/,
      ],
      [JSON.stringify([call(1), call(1)]), /unique within a batch/],
    ] as const) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as any).error.message).toMatch(why);
    }
    expect(await receiptsOf(plaza.server.url, plaza.apiKey, 'provider=f-big-numbers')).toHaveLength(before);
  });

  it.each(OTHER_FAILURES)(
    'answers a request other than a call in-band when the upstream fails it (%s): a JSON-RPC error, never a 5xx or silence',
    async (mode) => {
      const post = (body: unknown) =>
        fetch(`${plaza.server.url}/mcp/p/f-${mode}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${plaza.agentToken}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify(body),
        });
      const single = await post({ jsonrpc: '2.0', id: 5, method: 'prompts/list' });
      expect(single.status).toBe(200);
      const text = await single.text();
      const answer = (single.headers.get('content-type') ?? '').startsWith('text/event-stream')
        ? JSON.parse(/^data: (.*)$/m.exec(text)![1]!)
        : JSON.parse(text);
      expect(answer).toMatchObject({
        jsonrpc: '2.0',
        id: 5,
        error: { code: -32603, message: expect.stringMatching(/^Upstream failed: the upstream /) },
      });
      expect(answer.result).toBeUndefined();
    },
  );

  it("passes on no answer the provider was not asked for: on a GET stream, after the call's answer, in a refusal, in a batch", async () => {
    const headers = {
      authorization: `Bearer ${plaza.agentToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const events = (text: string) => [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    // A GET stream: the notification passes, the answer under id 2 does not.
    const stream = await fetch(`${plaza.server.url}/mcp/p/f-forge-get`, {
      headers: { authorization: headers.authorization, accept: 'text/event-stream' },
    });
    const streamed = events(await stream.text());
    expect(streamed.map((m) => m.method ?? `answer ${m.id}`)).toEqual(['notifications/message']);
    // The call's answer, then a forged one under the caller's id in the same write: one answer, stamped.
    const call = await fetch(`${plaza.server.url}/mcp/p/f-guessed-after`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'act', arguments: {} } }),
    });
    const answers = events(await call.text()).filter((m) => m.id === 1);
    expect(answers).toHaveLength(1);
    expect(answers[0].result.content[0].text).toBe('real');
    expect(answers[0].result._meta.platform.call_id).toMatch(/^call_/);
    // A 400 whose body answers another id: the status, and Plaza's error in place of the body.
    const refused = await fetch(`${plaza.server.url}/mcp/p/f-other-forged`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'prompts/list' }),
    });
    expect(refused.status).toBe(400);
    const refusedText = await refused.text();
    expect(refusedText).not.toContain('FORGED');
    expect(JSON.parse(refusedText)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'The upstream answered HTTP 400.' },
    });
    // A batch answered under an id none of its requests has: each request gets an error under its own id.
    const batch = await fetch(`${plaza.server.url}/mcp/p/f-other-forged`, {
      method: 'POST',
      headers,
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
      ]),
    });
    expect(batch.status).toBe(200);
    const errors = (await batch.json()) as any[];
    expect(errors.map((e) => [e.id, e.error?.code])).toEqual([
      [1, -32603],
      [2, -32603],
    ]);
  });

  it('records a call whose stream its client stopped reading when the gateway stops waiting, not when the client reads again', async () => {
    const before = (await receiptsOf(plaza.server.url, plaza.apiKey, 'provider=f-flood')).length;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        `${plaza.server.url}/mcp/p/f-flood`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${plaza.agentToken}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        resolve,
      );
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'act', arguments: {} } }));
    });
    res.pause();
    try {
      await expect
        .poll(async () => (await receiptsOf(plaza.server.url, plaza.apiKey, 'provider=f-flood')).length, {
          timeout: GATEWAY_TIMEOUT_MS + 5_000,
        })
        .toBe(before + 1);
      const [receipt] = await receiptsOf(plaza.server.url, plaza.apiKey, 'provider=f-flood');
      expect(receipt).toMatchObject({ status: 'error' });
    } finally {
      res.destroy();
    }
  });

  it("keeps the caller's upstream credential out of receipts when the provider quotes it back", async () => {
    const secret = 'sk-live-SECRET-987';
    const headers = { 'x-platform-upstream-authorization': `Bearer ${secret}` };
    for (const as of ['error', 'result']) {
      const passthrough = await callTool(plaza.server.url, plaza.agentToken, 'f-echo-credential', { as }, headers);
      expect(JSON.stringify(passthrough.message)).toContain(secret); // the caller's own credential, back to the caller
      const aggregate = await fetch(`${plaza.server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${plaza.agentToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'x-platform-upstream-provider': 'f-echo-credential',
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'f-echo-credential__act', arguments: { as } },
        }),
      });
      expect(aggregate.status).toBe(200);
      await aggregate.text();
    }
    const receipts = await receiptsOf(plaza.server.url, plaza.apiKey, 'provider=f-echo-credential');
    expect(receipts).toHaveLength(4);
    for (const r of receipts) {
      expect(r.outcome).not.toContain(secret);
      expect(r.outcome).toContain('the token [credential removed] is not valid here');
    }
  });

  it.each(ODD_ANSWERS)('records %s as a failed call with an error receipt, through /mcp/p and /mcp', async (mode) => {
    // Passthrough relays the upstream's protocol as it is: content of a type the client does not
    // know reaches the client (its call to judge) and is receipted as the ok result it is.
    const relayed = mode === 'bad-content';
    const passthrough = await callTool(plaza.server.url, plaza.agentToken, `f-${mode}`, { message: mode });
    expect(passthrough.status).toBe(200);
    expect(passthrough.message?.result?.isError, JSON.stringify(passthrough.message)).toBe(relayed ? undefined : true);
    expect(passthrough.message.result._meta.platform.call_id).toMatch(/^call_/);
    const aggregate = await fetch(`${plaza.server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${plaza.agentToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: `f-${mode}__act`, arguments: {} },
      }),
    });
    const answer = (await aggregate.json()) as any;
    expect(aggregate.status).toBe(200);
    expect(answer.result?.isError, JSON.stringify(answer)).toBe(true);
    expect(answer.result.content[0].text).toMatch(/^Call failed: the upstream /);
    const receipts = await receiptsOf(plaza.server.url, plaza.apiKey, `provider=f-${mode}`);
    expect(receipts.map((r) => r.status)).toEqual([relayed ? 'ok' : 'error', 'error']);
    expect(receipts.map((r) => r.call_id).sort()).toEqual(
      [passthrough.message.result._meta.platform.call_id, answer.result._meta.platform.call_id].sort(),
    );
  });

  it('refuses a 50 MB answer with an error result, keeping memory bounded', async () => {
    const pid = plaza.server.child.pid!;
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await callTool(plaza.server.url, plaza.agentToken, 'f-huge');
        expect(answer.ms).toBeLessThan(GATEWAY_TIMEOUT_MS + 5_000);
        expect(answer.message?.result?.isError).toBe(true);
        expect(answer.bytes).toBeLessThan(1024 * 1024);
      }
    } finally {
      clearInterval(sampler);
    }
    // The relay stops at PLAZA_GATEWAY_MAX_RESPONSE_BYTES (32 MiB): three 50 MB answers must not
    // add up, and a single one must not be held several times over.
    expect(peak - before, `RSS ${before >> 20} MiB -> peak ${peak >> 20} MiB`).toBeLessThan(160 * 1024 * 1024);
    const receipts = await receiptsOf(plaza.server.url, plaza.apiKey, 'provider=f-huge');
    expect(receipts.map((r) => r.status)).toEqual(['error', 'error', 'error']);
  }, 60_000);
});

describe('SIGTERM during gateway load', () => {
  it('finishes in-flight calls, exits 0, and keeps one receipt per answered call', async () => {
    const upstream = await startFaultUpstream();
    const plaza = await startGatewayPlaza();
    try {
      await listHealthy(plaza.server.url, 'slow', `${upstream.url('ok')}?delay=1500`);
      const calls = Array.from({ length: 16 }, (_, i) =>
        callTool(plaza.server.url, plaza.agentToken, 'slow', { message: `load ${i}` }).catch((error: unknown) => ({
          error,
        })),
      );
      // SIGTERM while the calls are on their way: once the first has reached the (slow) upstream
      // the others were sent too, some still unread or authenticating, none answered. A fixed
      // delay here was not enough on a loaded machine: calls not yet sent when the signal came
      // met a closed listener, which is right, but not what this test is about.
      const started = Date.now();
      while (!upstream.seen.some((r) => r.body?.method === 'tools/call') && Date.now() - started < 10_000)
        await new Promise((r) => setTimeout(r, 10));
      plaza.server.child.kill('SIGTERM');
      const signalled = Date.now();
      const answers = await Promise.all(calls);
      const answeredAfter = Date.now() - signalled;
      expect(await plaza.server.exited).toBe(0);
      // The drain ends with the last answer (plus the sweep), not at PLAZA_SHUTDOWN_TIMEOUT_MS.
      const exitedAfter = Date.now() - signalled;
      expect(
        exitedAfter - answeredAfter,
        `answered after ${answeredAfter} ms, exited after ${exitedAfter} ms`,
      ).toBeLessThan(3_000);
      const ok = answers.filter(
        (a): a is Awaited<ReturnType<typeof callTool>> => 'message' in a && a.message?.result?.isError === false,
      );
      expect(
        ok,
        JSON.stringify(
          answers.filter((a) => !ok.includes(a as never)),
          (_k, v) => (v instanceof Error ? `${String(v)} ${String(v.cause)}` : v),
        ),
      ).toHaveLength(16);
      const callIds = ok.map((a) => a.message.result._meta.platform.call_id as string);

      const again = await startPlazaServer(plaza.env);
      try {
        const receipts = await receiptsOf(again.url, plaza.apiKey, 'provider=slow&limit=500');
        expect(receipts.map((r) => r.call_id).sort()).toEqual([...callIds].sort());
        expect(receipts.every((r) => r.status === 'ok')).toBe(true);
      } finally {
        again.child.kill('SIGTERM');
        await again.exited;
      }
    } finally {
      plaza.server.child.kill('SIGKILL');
      await upstream.close();
    }
  }, 90_000);
});

describe('SIGTERM with an MCP client connected', () => {
  it('ends the open notification stream instead of waiting out the drain time for it', async () => {
    const upstream = await startSdkUpstream();
    // A gateway timeout longer than the drain time: a silent stream is not cut for silence first.
    const plaza = await startGatewayPlazaProcess({ PLAZA_SHUTDOWN_TIMEOUT_MS: '10000' }, 30_000);
    const client = new Client({ name: 'idle-ide', version: '1.0.0' });
    try {
      await listHealthy(plaza.server.url, 'idle', upstream.url);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${plaza.server.url}/mcp/p/idle`), {
          requestInit: { headers: { authorization: `Bearer ${plaza.agentToken}` } },
        }),
      );
      // The SDK client opens its notification stream (a GET) once initialized; wait until it reached the upstream.
      const started = Date.now();
      while (!upstream.seen.some((r) => r.method === 'GET') && Date.now() - started < 10_000)
        await new Promise((r) => setTimeout(r, 20));
      expect(upstream.seen.some((r) => r.method === 'GET')).toBe(true);
      const signalled = Date.now();
      plaza.server.child.kill('SIGTERM');
      expect(await plaza.server.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(3_000);
    } finally {
      await client.close().catch(() => undefined);
      plaza.server.child.kill('SIGKILL');
      await upstream.close();
    }
  }, 60_000);
});

describe.skipIf(!HAS_REDIS_SERVER)('Redis stopped and started again', () => {
  let redisPort = 0;
  let redis: ChildProcess | undefined;
  let plaza: ServerProcess;
  const prefix = `plaza-faults:${randomToken(6)}:`;

  async function startRedis(): Promise<void> {
    redis = startChild(
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    redis.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 100 && !out.includes('Ready to accept connections'); i++)
      await new Promise((r) => setTimeout(r, 50));
  }
  async function stopRedis(): Promise<void> {
    if (!redis || redis.exitCode !== null) return;
    redis.kill('SIGKILL');
    await once(redis, 'exit');
  }
  const keys = () =>
    spawnSync('redis-cli', ['-p', String(redisPort), '--scan', '--pattern', `${prefix}*`], {
      encoding: 'utf8',
    }).stdout.trim();
  const intent = async () =>
    (
      await fetch(`${plaza.url}/api/agent/intent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'receipts for agents' }),
      })
    ).status;

  beforeAll(async () => {
    redisPort = await freePort();
    await startRedis();
    plaza = await startPlazaServer({
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      PLAZA_RATE_LIMIT_KEY_PREFIX: prefix,
      PLAZA_RATE_LIMIT_INTENT_PER_MIN: '3',
      PLAZA_BACKGROUND: '0',
    });
  }, 30_000);
  afterAll(async () => {
    plaza?.child.kill('SIGKILL');
    await stopRedis();
  });

  it('counts in Redis, falls back to local limits with a warning, and shares again when Redis returns', async () => {
    expect([await intent(), await intent(), await intent(), await intent()]).toEqual([200, 200, 200, 429]);
    expect(keys()).toContain(`${prefix}intent`);

    await stopRedis();
    const during = [await intent(), await intent(), await intent(), await intent()];
    // Local counts start afresh: the site stays up, and the limit still holds per instance.
    expect(during).toEqual([200, 200, 200, 429]);
    expect(plaza.output()).toContain('rate limits fall back to per-instance counts');

    await startRedis();
    let back = false;
    for (let i = 0; i < 80 && !back; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await intent();
      back = plaza.output().includes('rate limits are shared again');
    }
    expect(back).toBe(true);
    expect(keys()).toContain(`${prefix}intent`);
  }, 30_000);
});

const DATABASE = process.env['TEST_DATABASE_URL'];

describe.skipIf(!DATABASE)('database faults on PostgreSQL (sync receipts)', () => {
  let database: { url: string; drop(): Promise<void> };
  let admin: pg.Client;
  let upstream: FaultUpstream;
  const name = () => new URL(database.url).pathname.slice(1);

  beforeAll(async () => {
    database = await createPostgresDatabase(DATABASE, 'plaza_faults');
    admin = new pg.Client({ connectionString: DATABASE });
    await admin.connect();
    upstream = await startFaultUpstream();
  }, 30_000);
  afterAll(async () => {
    await admin?.query(`ALTER DATABASE "${name()}" ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin?.end();
    await upstream?.close();
    await database?.drop();
  });

  it('keeps exactly one receipt per answered call when the database drops every connection and refuses new ones', async () => {
    const plaza = await startGatewayPlaza({ DATABASE_URL: database.url });
    try {
      await listHealthy(plaza.server.url, 'slow', `${upstream.url('ok')}?delay=100`);
      const traffic = gatewayLoad(plaza.server.url, plaza.agentToken, 'slow', 6);
      // Calls answered before the outage (one per client loop), then the outage, then calls
      // answered after it (as many again): waited for, not a fixed second on either side.
      await expect.poll(() => traffic.answered.length, { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(6);
      // A restart as the clients see it: no new connections, every open one cut, back after 2 s.
      await admin.query(`ALTER DATABASE "${name()}" ALLOW_CONNECTIONS false`);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name()],
      );
      await new Promise((r) => setTimeout(r, 2_000));
      await admin.query(`ALTER DATABASE "${name()}" ALLOW_CONNECTIONS true`);
      const reopened = traffic.answered.length;
      await expect
        .poll(() => traffic.answered.length, { timeout: 20_000, interval: 50 })
        .toBeGreaterThanOrEqual(reopened + 6);
      await traffic.stop();
      expect(traffic.answered.length).toBeGreaterThan(10);
      // Spooled receipts are replayed every second.
      let counts = await receiptCounts(database.url);
      for (let i = 0; i < 50 && traffic.answered.some((id) => counts.get(id) !== 1); i++) {
        await new Promise((r) => setTimeout(r, 200));
        counts = await receiptCounts(database.url);
      }
      const missing = traffic.answered.filter((id) => counts.get(id) !== 1);
      expect(
        missing,
        `${missing.length} of ${traffic.answered.length} answered calls without exactly one receipt`,
      ).toEqual([]);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      expect(
        traffic.failures.every((status) => status < 500 || status === 503),
        `statuses ${traffic.failures.join(',')}`,
      ).toBe(true);
    } finally {
      plaza.server.child.kill('SIGKILL');
      await plaza.server.exited;
    }
  }, 60_000);

  it('has a receipt after a restart for every call answered before SIGKILL', async () => {
    const plaza = await startGatewayPlaza({ DATABASE_URL: database.url, RECEIPTS_DURABILITY: 'sync' });
    const traffic = gatewayLoad(plaza.server.url, plaza.agentToken, 'slow', 8);
    // SIGKILL once more than 10 calls were answered, with the loops' next calls on their way.
    await expect.poll(() => traffic.answered.length, { timeout: 20_000, interval: 20 }).toBeGreaterThan(10);
    plaza.server.child.kill('SIGKILL');
    await plaza.server.exited;
    await traffic.stop();
    expect(traffic.answered.length).toBeGreaterThan(10);
    // Same data folder (its spool) and database: whatever was spooled is replayed at start.
    const again = await startPlazaServer(plaza.env);
    try {
      let counts = await receiptCounts(database.url);
      for (let i = 0; i < 20 && traffic.answered.some((id) => counts.get(id) !== 1); i++) {
        await new Promise((r) => setTimeout(r, 200));
        counts = await receiptCounts(database.url);
      }
      expect(traffic.answered.filter((id) => counts.get(id) !== 1)).toEqual([]);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 60_000);
});
