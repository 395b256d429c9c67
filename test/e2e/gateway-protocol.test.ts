/**
 * The gateway held to the MCP streamable HTTP transport with real peers: the SDK client as the
 * agent, providers on the SDK's own server (one resumable through its InMemoryEventStore). Pins
 * what the spec asks of a server that clients and upstreams rely on — request ids, cancellation,
 * resumed streams (a provider closing a call's stream early, SEP-1699; a client resuming one its
 * connection lost) — and that none of it lets a result reach a caller other than as its receipt says.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

import {
  type CallReceipt,
  type Connector,
  createAggregate,
  createPassthrough,
  createSessionSealer,
  createUpstreamPool,
} from '../../gateway/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { postMcp, sseMessages } from '../support/json-rpc.ts';
import { agentSession } from '../support/mcp-session.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';

describe('gateway against the MCP transport spec, with SDK peers', () => {
  let t: TestDatabase;
  let gateway: Server;
  let url = '';
  let plain: SdkUpstream;
  let resumable: SdkUpstream;
  /** Resumable, and asks for resumes after 50 ms (SSE `retry`); its `polled` tool closes its call's stream early. */
  let polling: SdkUpstream;
  let raw: Server;
  let rawUrl = '';
  /** Bodies the raw provider received, as text. */
  const rawBodies: string[] = [];
  let token = '';
  /** Another agent's, of another account. */
  let otherToken = '';
  /** What the gateway's handlers threw (each became a 500 here). */
  const handlerFailures: unknown[] = [];
  const receipts: CallReceipt[] = [];
  const connectors = new Map<string, Connector>();
  /** How long writing a receipt takes (a slow database). */
  let receiptDelayMs = 0;

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const { agents, ...agent } = await createTestAgent(t.db.prisma, 'ops@example.com', {
      display_name: 'Protocol agent',
      owner_context: 'acme',
    });
    token = agent.token;
    const other = await createAccountService({ prisma: t.db.prisma, clock: systemClock }).createAccount({
      email: 'mallory@example.com',
    });
    otherToken = (await agents.create(other.account.id, { display_name: 'Other agent', owner_context: 'mallory' }))
      .token;
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    [plain, resumable, polling] = await Promise.all([
      startSdkUpstream(),
      startSdkUpstream({ eventStore: true }),
      startSdkUpstream({ eventStore: true, retryInterval: 50 }),
    ]);
    connectors.set('plain', { provider: 'plain', url: plain.url, endpointId: 'ep_plain' });
    connectors.set('resumable', { provider: 'resumable', url: resumable.url, endpointId: 'ep_resumable' });
    connectors.set('polling', { provider: 'polling', url: polling.url, endpointId: 'ep_polling' });
    // Answers a call with a 64-bit number, written as JSON has it: as JSON, or (on /sse) as an event.
    raw = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      rawBodies.push(text);
      const request = JSON.parse(text);
      // A provider that puts a call id of its choosing on a task's result.
      const forged =
        request.method === 'tasks/result'
          ? ',"_meta":{"platform":{"call_id":"call_forged","agin_id":"agin_forged"},"keep":1}'
          : '';
      const answer = `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"id":18446744073709551615}${forged}}}`;
      // Asks its client things before the answer: a ping twice under one id, roots/list under id null and under a 64-bit id.
      if (req.url === '/asks' && request.method === 'tools/call') {
        const ask = (id: string, method: string) =>
          `event: message\ndata: {"jsonrpc":"2.0","id":${id},"method":"${method}"}\n\n`;
        res
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(
            `${ask('7', 'ping')}${ask('7', 'ping')}${ask('null', 'roots/list')}${ask('18446744073709551615', 'roots/list')}event: message\ndata: ${answer}\n\n`,
          );
        return;
      }
      // Asks its client more than a call may make Plaza answer, each under its own id.
      if (req.url === '/asks-flood' && request.method === 'tools/call') {
        const asks = Array.from(
          { length: 40 },
          (_, i) => `event: message\ndata: {"jsonrpc":"2.0","id":"p${i}","method":"ping"}\n\n`,
        ).join('');
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${asks}event: message\ndata: ${answer}\n\n`);
        return;
      }
      // On a task's result, under an event id in the form of a call stream's (see the test of it).
      const eventId =
        request.method === 'tasks/result'
          ? `id: call_01jz6a4k3m5n7p9q1r3s5t7v9w.1.${Buffer.from(JSON.stringify(request.id)).toString('base64url')}\n`
          : '';
      if (req.url === '/sse')
        res
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(`event: message\n${eventId}data: ${answer}\n\n`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    connectors.set('raw-json', { provider: 'raw-json', url: `${rawUrl}/json`, endpointId: 'ep_raw_json' });
    connectors.set('raw-sse', { provider: 'raw-sse', url: `${rawUrl}/sse`, endpointId: 'ep_raw_sse' });
    const common = {
      agents,
      receipts: {
        record: async (r: CallReceipt) => {
          if (receiptDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, receiptDelayMs));
          receipts.push(r);
        },
      },
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
    };
    // Long enough that a call left to its timeout is told apart from one ended on purpose.
    const timeoutMs = 10_000;
    const passthrough = createPassthrough({
      ...common,
      directory: { byProvider: async (p) => connectors.get(p) },
      sealer: createSessionSealer(randomBytes(32)),
      upstreamTimeoutMs: timeoutMs,
    });
    const aggregate = createAggregate({
      ...common,
      catalog: {
        onlineTools: async () => [],
        byProvider: async (p) => connectors.get(p),
        needsCredential: async () => false,
      },
      pool: createUpstreamPool({ timeoutMs }),
    });
    // The same passthrough with a short timeout, on /short/mcp/p/<provider>.
    const impatient = createPassthrough({
      ...common,
      directory: { byProvider: async (p) => connectors.get(p) },
      sealer: createSessionSealer(randomBytes(32)),
      upstreamTimeoutMs: 600,
    });
    gateway = createServer((req, res) => {
      const provider = /^\/mcp\/p\/([a-z0-9-]+)$/.exec(req.url ?? '')?.[1];
      const shortProvider = /^\/short\/mcp\/p\/([a-z0-9-]+)$/.exec(req.url ?? '')?.[1];
      const handled = provider
        ? passthrough(req, res, provider)
        : shortProvider
          ? impatient(req, res, shortProvider)
          : aggregate(req, res);
      handled.catch((error: unknown) => {
        handlerFailures.push(error);
        res.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    gateway?.closeAllConnections();
    gateway?.close();
    raw?.close();
    await Promise.all([plain?.close(), resumable?.close(), polling?.close()]);
    await t?.dispose();
  });

  /** An SDK client with a session on `/mcp/p/<provider>` (under `prefix`), and the headers to send raw requests in it. */
  const session = (provider: string, prefix = '') =>
    agentSession(`${url}${prefix}/mcp/p/${provider}`, token, 'protocol-agent');

  it('gives two calls sent at once under one JSON-RPC id in one session each its own answer and receipt', async () => {
    const { client, headers } = await session('plain');
    const call = (ms: number) =>
      fetch(`${url}/mcp/p/plain`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/call',
          params: { name: 'slow', arguments: { ms } },
        }),
      }).then(async (res) => sseMessages(await res.text()));
    const first = call(300);
    await new Promise((r) => setTimeout(r, 50));
    const [a, b] = await Promise.all([first, call(900)]);
    expect(a.map((m) => m.result?.content?.[0]?.text)).toEqual(['slept 300']);
    expect(b.map((m) => m.result?.content?.[0]?.text)).toEqual(['slept 900']);
    expect(a[0].id).toBe(5);
    expect(b[0].id).toBe(5);
    const ids = [a[0].result._meta.platform.call_id, b[0].result._meta.platform.call_id];
    expect(ids.map((id) => receipts.find((r) => r.callId === id)?.status)).toEqual(['ok', 'ok']);
    // The provider sees each call under its call id, so two of them never share an id.
    // (In either order: under load the second POST may overtake the first on its way upstream.)
    expect(
      plain.seen
        .filter((s) => s.body?.method === 'tools/call')
        .map((s) => s.body.id)
        .sort(),
    ).toEqual([...ids].sort());
    await client.close();
  });

  it('never lets a resumed stream hand the caller a call answer after its receipt said it went unanswered', async () => {
    // A provider that works on after the gateway cancelled the call, and stores its answer for a resumed stream.
    resumable.ignoreCancellations = true;
    onTestFinished(() => {
      resumable.ignoreCancellations = false;
    });
    const { client, headers } = await session('resumable');
    const left = new AbortController();
    const post = await fetch(`${url}/mcp/p/resumable`, {
      method: 'POST',
      headers,
      signal: left.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 77,
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 300 } },
      }),
    });
    // The SDK server opens the stream with a priming event: its id is what a client resumes from.
    const reader = post.body!.getReader();
    let first = '';
    while (!first.includes('\n\n')) first += new TextDecoder().decode((await reader.read()).value);
    const lastEventId = /^id: (.+)$/m.exec(first)?.[1];
    expect(lastEventId).toBeDefined();
    left.abort();
    await expect
      .poll(() => receipts.find((r) => r.tool === 'slow' && r.provider === 'resumable')?.outcome)
      .toMatch(/went away/);
    const callId = receipts.find((r) => r.tool === 'slow' && r.provider === 'resumable')!.callId;
    await expect
      .poll(() =>
        resumable.seen.some((s) => s.body?.method === 'notifications/cancelled' && s.body.params.requestId === callId),
      )
      .toBe(true);
    // The upstream ran the call to its end all the same and stored the answer for a resumed stream.
    await expect.poll(() => resumable.slow.done).toBe(1);
    const resumed = await fetch(`${url}/mcp/p/resumable`, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': lastEventId! },
    });
    expect(resumed.status).toBe(200);
    const stream = resumed.body!.getReader();
    let replayed = '';
    const until = Date.now() + 500;
    while (Date.now() < until) {
      const next = await Promise.race([
        stream.read(),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), until - Date.now())),
      ]);
      if (!next || next.done) break;
      replayed += new TextDecoder().decode(next.value);
    }
    await stream.cancel();
    // Not the provider's stored answer: the call's error result, as its receipt has it.
    expect(replayed).not.toContain('slept');
    const answers = sseMessages(replayed).filter((m) => m.id === 77);
    expect(answers.map((m) => [m.result.isError, m.result._meta.platform.call_id])).toEqual([[true, callId]]);
    await client.close();
  });

  it("resumes a call's stream the provider closed early (SEP-1699) itself, and gives the SDK client the result on its POST, receipted ok", async () => {
    const { client } = await session('polling');
    const seenBefore = polling.seen.length;
    const result = await client.callTool({ name: 'polled', arguments: { ms: 200 } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'polled after 200 ms' }]);
    const callId = (result._meta as { platform: { call_id: string } }).platform.call_id;
    await expect
      .poll(() => receipts.filter((r) => r.callId === callId).map((r) => `${r.tool} ${r.status}`))
      .toEqual(['polled ok']);
    // Plaza resumed the stream upstream (GET with Last-Event-ID), not the client.
    const resumes = polling.seen.slice(seenBefore).filter((s) => s.method === 'GET' && s.lastEventId !== undefined);
    expect(resumes).toHaveLength(1);
    await client.close();
  });

  it('fails a call whose closed stream the provider will not resume, after a bounded number of tries: an isError result and one error receipt', async () => {
    polling.refuseResumes = true;
    onTestFinished(() => {
      polling.refuseResumes = false;
    });
    const { client } = await session('polling');
    const seenBefore = polling.seen.length;
    const started = Date.now();
    const result = await client.callTool({ name: 'polled', arguments: { ms: 100 } });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toMatch(
      /^Call failed: the upstream closed the stream before the result and did not resume it \(HTTP 503\)/,
    );
    // Well within the gateway's 10 s timeout.
    expect(Date.now() - started).toBeLessThan(5_000);
    const callId = (result._meta as { platform: { call_id: string } }).platform.call_id;
    await expect.poll(() => receipts.filter((r) => r.callId === callId).map((r) => r.status)).toEqual(['error']);
    const tries = polling.seen
      .slice(seenBefore)
      .filter((s) => s.method === 'GET' && s.lastEventId !== undefined).length;
    expect(tries).toBeGreaterThan(1);
    expect(tries).toBeLessThanOrEqual(3);
    await client.close();
  });

  it("stops resuming a provider that keeps closing the call's stream: an isError result, an error receipt, and the call cancelled upstream", async () => {
    const { client } = await session('polling');
    const started = Date.now();
    const result = await client.callTool({ name: 'polled', arguments: { ms: 8_000, every: 60 } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toBe(
      'Call failed: the upstream closed the stream before the result 11 times; Plaza stopped resuming it.',
    );
    const callId = (result._meta as { platform: { call_id: string } }).platform.call_id;
    await expect.poll(() => receipts.filter((r) => r.callId === callId).map((r) => r.status)).toEqual(['error']);
    expect(
      polling.seen.filter((s) => s.method === 'GET' && s.lastEventId !== undefined && s.body === undefined).length,
    ).toBeGreaterThanOrEqual(10);
    await expect
      .poll(() =>
        polling.seen.some((s) => s.body?.method === 'notifications/cancelled' && s.body.params.requestId === callId),
      )
      .toBe(true);
    await client.close();
  });

  it("answers an SDK client that lost its connection mid-call and resumes the stream with the call's error result at once, not a silent stream", async () => {
    // The client's connection drops once its call's stream has begun (a proxy cut it, say): the
    // gateway cancels the call upstream and receipts it error; the client resumes with Last-Event-ID.
    const fetchThatDrops: typeof fetch = async (input, init) => {
      if (init?.method !== 'POST' || !String(init.body).includes('"tools/call"')) return fetch(input, init);
      const cut = new AbortController();
      init.signal?.addEventListener('abort', () => cut.abort());
      const answer = await fetch(input, { ...init, signal: cut.signal });
      const reader = answer.body!.getReader();
      let seen = '';
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          // Everything up to the first whole event (the priming one, with its id) gets through.
          if (seen.includes('\n\n')) {
            cut.abort();
            controller.error(new TypeError('terminated'));
            return;
          }
          const next = await reader.read();
          if (next.done) return controller.close();
          seen += new TextDecoder().decode(next.value);
          controller.enqueue(next.value);
        },
      });
      return new Response(body, { status: answer.status, headers: answer.headers });
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp/p/polling`), {
      fetch: fetchThatDrops,
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'dropping-agent', version: '1.0.0' });
    await client.connect(transport);
    const before = { ...polling.slow };
    const started = Date.now();
    const result = await client.callTool({ name: 'slow', arguments: { ms: 5_000 } }, undefined, { timeout: 4_000 });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toMatch(
      /^Call failed: the connection to the caller was lost before the result/,
    );
    const callId = (result._meta as { platform: { call_id: string } }).platform.call_id;
    await expect
      .poll(() => receipts.filter((r) => r.callId === callId).map((r) => `${r.status} ${r.outcome}`))
      .toEqual([expect.stringMatching(/^error .*went away/)]);
    await expect.poll(() => polling.slow.aborted).toBe(before.aborted + 1);
    expect(polling.slow.done).toBe(before.done);
    await client.close();
  });

  /** Starts the polling provider's slow tool as call `id` in the session `headers` name; its stream read up to its first event id. */
  async function slowCallStream(headers: Record<string, string>, id: string | number, ms: number) {
    const post = await fetch(`${url}/mcp/p/polling`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { ms } } }),
    });
    const reader = post.body!.getReader();
    let seen = '';
    while (!/\nid: ([^\n]+)\n/.test(`\n${seen}`)) seen += new TextDecoder().decode((await reader.read()).value);
    return { reader, seen, eventId: /(?:^|\n)id: ([^\n]+)\n/.exec(seen)![1]! };
  }

  it("ends a call still running when its client resumes the call's stream elsewhere (Last-Event-ID), so the error it answers is true", async () => {
    // The client's POST stream is still open here (another instance, or this one not yet aware
    // of the broken connection), and the client resumes the call's stream with a GET.
    const { client, headers } = await session('polling');
    const before = { ...polling.slow };
    const { reader, eventId } = await slowCallStream(headers, 41, 5_000);
    const resumed = await fetch(`${url}/mcp/p/polling`, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': eventId },
    });
    expect(resumed.status).toBe(200);
    const [answer] = sseMessages(await resumed.text());
    expect(answer.id).toBe(41);
    expect(answer.result.isError).toBe(true);
    // The call was ended upstream, not left to finish with an ok receipt the client never hears of.
    await expect.poll(() => polling.slow.aborted, { timeout: 3_000 }).toBe(before.aborted + 1);
    expect(polling.slow.done).toBe(before.done);
    const callId = answer.result._meta.platform.call_id;
    await expect.poll(() => receipts.filter((r) => r.callId === callId).map((r) => r.status)).toEqual(['error']);
    await reader.cancel().catch(() => undefined);
    await client.close();
  });

  it.each([
    [
      'another agent, in its own session',
      async () => ({ ...(await agentSession(`${url}/mcp/p/polling`, otherToken, 'other-agent')).headers }),
      'polling',
    ],
    ['another agent, without a session', async () => ({ authorization: `Bearer ${otherToken}` }), 'polling'],
    [
      "the call's agent on another provider's path",
      async () => ({ ...(await session('resumable')).headers }),
      'resumable',
    ],
    ["the call's agent without its session", async () => ({ authorization: `Bearer ${token}` }), 'polling'],
  ])(
    "refuses a call's event id presented by %s (400), and the call goes on to its answer",
    async (_name, resumerHeaders, path) => {
      const { client, headers } = await session('polling');
      const call = await slowCallStream(headers, 42, 800);
      const { reader, eventId } = call;
      let { seen } = call;
      const resumed = await fetch(`${url}/mcp/p/${path}`, {
        method: 'GET',
        headers: {
          ...(await resumerHeaders()),
          accept: 'text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'last-event-id': eventId,
        },
      });
      expect(resumed.status).toBe(400);
      expect(await resumed.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { message: 'Last-Event-ID names no stream of this session.' },
      });
      // The call was neither ended nor answered for: its own client gets its result, receipted ok.
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        seen += new TextDecoder().decode(next.value);
      }
      const [answer] = sseMessages(seen);
      expect(answer).toMatchObject({ id: 42, result: { content: [{ text: 'slept 800' }] } });
      const callId = answer.result._meta.platform.call_id;
      await expect.poll(() => receipts.filter((r) => r.callId === callId).map((r) => r.status)).toEqual(['ok']);
      await client.close();
    },
  );

  it("ends a call still running when its client resumes its stream, also when the caller's id was too long for the event id to name", async () => {
    const { client, headers } = await session('polling');
    const before = { ...polling.slow };
    const longId = `req-${'x'.repeat(300)}`;
    const { reader, eventId } = await slowCallStream(headers, longId, 5_000);
    const resumed = await fetch(`${url}/mcp/p/polling`, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': eventId },
    });
    expect(resumed.status).toBe(200);
    // The answer cannot name the request (its id is not in the event id); the call is ended all the same.
    await expect.poll(() => polling.slow.aborted, { timeout: 3_000 }).toBe(before.aborted + 1);
    expect(polling.slow.done).toBe(before.done);
    const callId = eventId.split('.')[0];
    await expect.poll(() => receipts.filter((r) => r.callId === callId).map((r) => r.status)).toEqual(['error']);
    await resumed.text();
    await reader.cancel().catch(() => undefined);
    await client.close();
  });

  it('passes a cancellation on to the upstream and receipts the call as cancelled at once', async () => {
    const { client } = await session('plain');
    const before = { ...plain.slow };
    const receiptsBefore = receipts.length;
    const stop = new AbortController();
    setTimeout(() => stop.abort('the user pressed stop'), 300);
    await expect(
      client.callTool({ name: 'slow', arguments: { ms: 5_000 } }, undefined, { signal: stop.signal }),
    ).rejects.toThrow(/pressed stop/);
    await expect.poll(() => plain.slow.aborted, { timeout: 2_000 }).toBe(before.aborted + 1);
    // Not after the gateway's 10 s timeout, and not as a timeout.
    await expect
      .poll(() => receipts.slice(receiptsBefore).map((r) => `${r.tool} ${r.status} ${r.outcome}`), { timeout: 2_000 })
      .toEqual(['slow error upstream failure: the caller cancelled the call']);
    const callId = receipts.at(-1)!.callId;
    const cancel = plain.seen.find((s) => s.body?.method === 'notifications/cancelled');
    expect(cancel?.body.params.requestId).toBe(callId);
    expect(plain.slow.done).toBe(before.done);
    await client.close();
  });

  it.each(['raw-json', 'raw-sse'])(
    "never relays a provider's own _meta.platform on a tasks/result no call of this agent created (%s)",
    async (provider) => {
      const res = await postMcp(`${url}/mcp/p/${provider}`, token, {
        jsonrpc: '2.0',
        id: 3,
        method: 'tasks/result',
        params: { taskId: 'task-of-someone-else' },
      });
      const text = await res.text();
      expect(text).toContain('"keep":1');
      expect(text).not.toContain('call_forged');
    },
  );

  it('cancels upstream a call whose caller left before its answer', async () => {
    const { client, headers } = await session('plain');
    const before = { ...plain.slow };
    const receiptsBefore = receipts.length;
    const callsSeen = () => plain.seen.filter((s) => s.body?.method === 'tools/call').length;
    const callsBefore = callsSeen();
    const left = new AbortController();
    const post = fetch(`${url}/mcp/p/plain`, {
      method: 'POST',
      headers,
      signal: left.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 41,
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 5_000 } },
      }),
    });
    // The provider is working on it.
    await expect.poll(callsSeen).toBe(callsBefore + 1);
    left.abort();
    await post.then((res) => res.text()).catch(() => undefined);
    await expect.poll(() => plain.slow.aborted, { timeout: 2_000 }).toBe(before.aborted + 1);
    await expect
      .poll(() => receipts.slice(receiptsBefore).map((r) => `${r.tool} ${r.status}`), { timeout: 2_000 })
      .toEqual(['slow error']);
    const callId = receipts.at(-1)!.callId;
    const cancel = plain.seen.find(
      (s) => s.body?.method === 'notifications/cancelled' && s.body.params.requestId === callId,
    );
    expect(cancel?.body.params.reason).toBe('the caller went away');
    expect(plain.slow.done).toBe(before.done);
    await client.close();
  });

  it('cancels upstream a call it stops waiting for at its timeout', async () => {
    const { client } = await session('plain', '/short');
    const before = { ...plain.slow };
    const receiptsBefore = receipts.length;
    const result = (await client.callTool({ name: 'slow', arguments: { ms: 5_000 } })) as any;
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/timed out|time/i);
    await expect.poll(() => plain.slow.aborted, { timeout: 2_000 }).toBe(before.aborted + 1);
    const callId = receipts.slice(receiptsBefore).at(-1)!.callId;
    const cancel = plain.seen.find(
      (s) => s.body?.method === 'notifications/cancelled' && s.body.params.requestId === callId,
    );
    expect(cancel?.body.params.reason).toBe('the gateway stopped waiting: no answer within 600 ms');
    expect(plain.slow.done).toBe(before.done);
    await client.close();
  });

  it('tells the provider nothing once it has answered, though the receipt outlasts the timeout and the caller leaves meanwhile', async () => {
    receiptDelayMs = 1_200;
    onTestFinished(() => {
      receiptDelayMs = 0;
    });
    const { client, headers } = await session('plain', '/short');
    const noticesBefore = plain.seen.filter((s) => s.body?.method === 'notifications/cancelled').length;
    // Stays: answered at 100 ms, receipted at 1.3 s, past the 600 ms timeout.
    const result = (await client.callTool({ name: 'slow', arguments: { ms: 100 } })) as any;
    expect(result.content[0].text).toBe('slept 100');
    // Leaves at 400 ms, while the answer's receipt is being written.
    const left = new AbortController();
    setTimeout(() => left.abort(), 400);
    await fetch(`${url}/short/mcp/p/plain`, {
      method: 'POST',
      headers,
      signal: left.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 42,
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 100 } },
      }),
    })
      .then((res) => res.text())
      .catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(plain.seen.filter((s) => s.body?.method === 'notifications/cancelled').length).toBe(noticesBefore);
    await client.close();
  });

  it.each(['null', '1.5', 'true', '{"n":1}', '12345678901234567890'])(
    'refuses request id %s (MCP: a string or an integer) before anything goes upstream',
    async (id) => {
      const { client, headers } = await session('plain');
      const seen = plain.seen.length;
      const receiptsBefore = receipts.length;
      const call = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`;
      for (const body of [call, `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`]) {
        const res = await fetch(`${url}/mcp/p/plain`, { method: 'POST', headers, body });
        expect(res.status, body).toBe(400);
        expect(((await res.json()) as any).error).toMatchObject({
          code: -32600,
          message: expect.stringMatching(/ids must be strings or integers/),
        });
      }
      // The fast path of /mcp refuses what the SDK's server would (an id that is not an integer).
      if (id !== '12345678901234567890') {
        const res = await fetch(`${url}/mcp`, {
          method: 'POST',
          headers: { ...headers, 'mcp-session-id': '' },
          body: call.replace('"echo"', '"plain__echo"'),
        });
        expect(res.status).toBe(400);
      }
      expect(plain.seen.slice(seen).filter((s) => s.method === 'POST')).toEqual([]);
      expect(receipts.length).toBe(receiptsBefore);
      await client.close();
    },
  );

  it.each(['/mcp', '/mcp/p/plain'])(
    "takes a request body cut short (%s) as the client's doing: a 400, no failure of its own",
    async (path) => {
      const failuresBefore = handlerFailures.length;
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`,
      );
      socket.end(); // half-closed: the body can never arrive
      await once(socket, 'close');
      // Node's parser answers the connection itself; the handler must not fail on the cut body.
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      await new Promise((r) => setTimeout(r, 100));
      expect(handlerFailures.slice(failuresBefore)).toEqual([]);
    },
  );

  it('answers a GET /mcp outside a 2025 session with 405: there is no session whose messages a stream would carry', async () => {
    const headers = {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const res = await fetch(`${url}/mcp`, { headers, signal: AbortSignal.timeout(2_000) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, DELETE');
    expect(((await res.json()) as any).error.message).toMatch(/notification stream of a 2025 session.*Mcp-Session-Id/);
    // Other methods are told the methods /mcp takes (GET in a session), as a passthrough's list.
    for (const method of ['PUT', 'PATCH']) {
      const other = await fetch(`${url}/mcp`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(other.status, method).toBe(405);
      expect(other.headers.get('allow'), method).toBe('GET, POST, DELETE');
      const passthrough = await fetch(`${url}/mcp/p/plain`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(passthrough.status, method).toBe(405);
      expect(passthrough.headers.get('allow'), method).toBe('GET, POST, DELETE');
    }
    // Still 401 without a credential, and the SDK client takes the 405 as the spec has it.
    expect((await fetch(`${url}/mcp`, { headers: { accept: 'text/event-stream' } })).status).toBe(401);
    const client = new Client({ name: 'protocol-agent', version: '1.0.0' });
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    expect(await client.ping()).toEqual({});
    await client.close();
    expect(errors).toEqual([]);
  });

  it('answers params a method refuses with -32602 naming the field, and valid JSON that is not JSON-RPC with 400 -32600, on /mcp', async () => {
    const headers = {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    const post = (body: unknown) => fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
    const answers = async (res: Response) => {
      const text = await res.text();
      return res.headers.get('content-type')?.includes('text/event-stream') ? sseMessages(text) : [JSON.parse(text)];
    };
    const cases: [unknown, string][] = [
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: {} } },
        'Invalid params for tools/list: params.cursor: ',
      ],
      [
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'initialize',
          params: { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        },
        'Invalid params for initialize: params.protocolVersion: ',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.status).toBe(200);
      const [answer] = await answers(res);
      expect(answer).toMatchObject({ id: (body as { id: number }).id, error: { code: -32602 } });
      expect(answer.error.message.startsWith(message), answer.error.message).toBe(true);
      // One line, not the validator's JSON dump.
      expect(answer.error.message).not.toMatch(/\n|"code":/);
    }
    // In a batch, the refused request gets its own -32602 and its neighbour its answer.
    const batch = await answers(
      await post([
        { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { cursor: {} } },
        { jsonrpc: '2.0', id: 9, method: 'ping' },
      ]),
    );
    expect(batch.find((m) => m.id === 8)).toMatchObject({ error: { code: -32602 } });
    expect(batch.find((m) => m.id === 9)).toMatchObject({ result: {} });
    // Valid JSON, not a JSON-RPC message as MCP has it: refused as an invalid request, not a parse error.
    const call = { name: 'plain__echo', arguments: { message: 'x' } };
    for (const body of [
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: 5 },
      { jsonrpc: '2.0', id: 4, method: 'ping', params: { _meta: 3 } },
      { jsonrpc: '2.0', id: null, method: 'tools/call', params: call },
      { jsonrpc: '2.0', id: {}, method: 'tools/call', params: call },
      { jsonrpc: '1.0', id: 5, method: 'tools/call', params: call },
      'hello',
      42,
    ]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await res.json(), JSON.stringify(body)).toMatchObject({
        id: null,
        error: { code: -32600, message: expect.stringMatching(/not a JSON-RPC 2.0 message/) },
      });
    }
  });

  it.each([
    ['an unsupported MCP-Protocol-Version', { 'mcp-protocol-version': '1999-01-01' }, 400],
    ['an Accept without text/event-stream', { accept: 'application/json' }, 406],
    ['a Content-Type that is not JSON', { 'content-type': 'text/plain' }, 415],
  ])('passes on the status of a call the upstream refuses at the transport level: %s', async (_label, bad, status) => {
    const { client, headers } = await session('plain');
    const res = await fetch(`${url}/mcp/p/plain`, {
      method: 'POST',
      headers: { ...headers, ...bad },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: 'x' } },
      }),
    });
    expect(res.status).toBe(status);
    const answer = (await res.json()) as any;
    // What the upstream said comes with it (the SDK's transport names what it refused).
    expect(answer.result.content[0].text).toMatch(
      new RegExp(`^Call failed: the upstream answered HTTP ${status} \\(.+\\)\\.$`),
    );
    expect(receipts.find((r) => r.callId === answer.result._meta.platform.call_id)?.status).toBe('error');
    await client.close();
  });

  it("removes an event id in the form of a call stream's from a stream that is not a call's: a client resuming from it would get a call's end", async () => {
    const res = await fetch(`${url}/mcp/p/raw-sse`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tasks/result', params: { taskId: 'task-1' } }),
    });
    const text = await res.text();
    expect(sseMessages(text).map((m) => m.id)).toEqual([4]);
    expect(text).not.toMatch(/^id:/m);
  });

  it.each(['raw-json', 'raw-sse'])(
    'carries integers past 2^53 in arguments and results as written (%s)',
    async (provider) => {
      rawBodies.length = 0;
      const headers = {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      const body =
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{"account":12345678901234567890,"big":-9007199254740993,"small":42,"float":1.5e300}}}';
      const res = await fetch(`${url}/mcp/p/${provider}`, { method: 'POST', headers, body });
      expect(res.status).toBe(200);
      expect(rawBodies[0]).toContain(
        '"arguments":{"account":12345678901234567890,"big":-9007199254740993,"small":42,"float":1.5e+300}',
      );
      const text = await res.text();
      expect(text).toContain('"structuredContent":{"id":18446744073709551615}');
      expect(text).toContain('"_meta":{"platform"');
      // The receipt digests the result as written too (canonical JSON: keys sorted, _meta left out).
      const canonical = '{"content":[{"text":"ok","type":"text"}],"structuredContent":{"id":18446744073709551615}}';
      expect(receipts.at(-1)!.resultDigest).toBe(createHash('sha256').update(canonical).digest('hex'));
    },
  );

  it.each([
    ['ping', /^ping answered \{\}$/],
    ['roots/list', /^roots\/list failed: MCP error -32601: .*roots\/list.*\/mcp\/p\/plain/],
    [
      'sampling/createMessage',
      /^sampling\/createMessage failed: MCP error -32601: .*sampling\/createMessage.*\/mcp\/p\/plain/,
    ],
    ['elicitation/create', /^elicitation\/create failed: MCP error -32601: .*elicitation\/create.*\/mcp\/p\/plain/],
  ])(
    "answers the upstream's %s during a pooled /mcp call at once, in its session: ping, anything else -32601 naming /mcp/p/<provider>",
    async (method, expected) => {
      const client = new Client({ name: 'aggregate-agent', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      const receiptsBefore = receipts.length;
      const seen = plain.seen.length;
      const progress: number[] = [];
      const started = Date.now();
      // With a progress token (served by the SDK's server, streamed), then without (the JSON fast path).
      const streamed = (await client.callTool({ name: 'plain__ask', arguments: { method } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      })) as any;
      const plainCall = (await client.callTool({ name: 'plain__ask', arguments: { method } })) as any;
      // The upstream's own wait for an answer is 60 s, Plaza's 10 s here: either would show.
      expect(Date.now() - started).toBeLessThan(4_000);
      for (const result of [streamed, plainCall]) {
        expect(result.isError).toBeFalsy();
        expect(result.content[0].text).toMatch(expected);
      }
      // The upstream's log message on the call's stream went nowhere; its progress reached the agent that asked.
      expect(progress).toEqual([1]);
      // One answer upstream per request it sent, in the pooled session (the upstream matched it to its request).
      const answers = plain.seen
        .slice(seen)
        .filter((s) => s.method === 'POST' && s.body !== undefined && s.body.method === undefined);
      expect(answers).toHaveLength(2);
      expect(receipts.slice(receiptsBefore).map((r) => `${r.provider}/${r.tool}/${r.status}`)).toEqual([
        'plain/ask/ok',
        'plain/ask/ok',
      ]);
      await client.close();
    },
    15_000,
  );

  it('answers each request an upstream sends during a pooled call once, under its own id, and none that names no request', async () => {
    const pool = createUpstreamPool({ timeoutMs: 5_000 });
    const before = rawBodies.length;
    const response = await pool.request({
      url: `${rawUrl}/asks`,
      method: 'tools/call',
      params: { name: 'x', arguments: {} },
      headers: {},
      refusal: (method) => `no ${method} here`,
    });
    expect(response.result).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
    const answers = () => rawBodies.slice(before).filter((body) => !body.includes('"method"'));
    await expect.poll(() => answers().length).toBe(2);
    // Anything more would have come by now: answers go out as soon as each request is read.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answers().sort()).toEqual([
      '{"jsonrpc":"2.0","id":18446744073709551615,"error":{"code":-32601,"message":"no roots/list here"}}',
      '{"jsonrpc":"2.0","id":7,"result":{}}',
    ]);
  });

  it('fails a pooled call whose upstream sends its client more requests than a call may make Plaza answer', async () => {
    const pool = createUpstreamPool({ timeoutMs: 5_000 });
    const before = rawBodies.length;
    await expect(
      pool.request({
        url: `${rawUrl}/asks-flood`,
        method: 'tools/call',
        params: { name: 'x', arguments: {} },
        headers: {},
      }),
    ).rejects.toThrow(/more than 32 requests/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(rawBodies.slice(before).filter((body) => body.includes('"result":{}')).length).toBe(32);
  });

  it('tells the upstream when /mcp stops waiting for a pooled call (timeout or a caller gone), as MCP asks of a requestor', async () => {
    const pool = createUpstreamPool({ timeoutMs: 300 });
    const slow = (signal?: AbortSignal) =>
      pool.request({
        url: plain.url,
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 5_000 } },
        headers: {},
        signal,
      });
    const before = plain.slow.aborted;
    const seen = plain.seen.length;
    await expect(slow()).rejects.toThrow(/did not answer in time/);
    await expect.poll(() => plain.slow.aborted, { timeout: 2_000 }).toBe(before + 1);
    const left = new AbortController();
    setTimeout(() => left.abort(new DOMException('caller went away', 'AbortError')), 100);
    await expect(slow(left.signal)).rejects.toThrow(/went away/);
    await expect.poll(() => plain.slow.aborted, { timeout: 2_000 }).toBe(before + 2);
    const posted = plain.seen.slice(seen).map((s) => s.body);
    const calls = posted.filter((b) => b?.method === 'tools/call').map((b) => b.id);
    expect(posted.filter((b) => b?.method === 'notifications/cancelled').map((b) => b.params.requestId)).toEqual(calls);
  });
});
