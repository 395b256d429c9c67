/**
 * The receipt of a task's result (MCP tasks): a tools/call answered with a task is receipted as
 * "task created", and the result the caller fetches later with tasks/result gets a receipt of its
 * own — its own call id (named in the result as `result_call_id`), the creating call's tool, an
 * outcome naming the task and the call, the digest of what the caller received — before it goes
 * back, over JSON and over an event stream, whatever the provider does: a result whose receipt can
 * be stored nowhere, or that comes replayed on a resumed stream, is not given out. The provider is
 * a small raw server, so its answers (and failures) are exact.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import {
  type CallReceipt,
  type Connector,
  createPassthrough,
  createSessionSealer,
  MAX_TASK_RESULTS_PER_POST,
  resultDigest,
  type TaskCall,
} from '../../gateway/index.ts';
import { createTaskDirectory } from '../../src/connectors/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { answerOf } from '../support/json-rpc.ts';

const PROTOCOL = '2025-11-25';

describe('receipts of task results through the passthrough', () => {
  let t: TestDatabase;
  let provider: Server;
  let gateway: Server;
  let url = '';
  let token = '';
  const receipts: CallReceipt[] = [];
  /** Receipts refused (as by a database and spool both unavailable) while this is above 0. */
  let refuseReceipts = 0;
  /** What the provider answers to tasks/result: see the provider below. */
  let taskAnswer:
    | 'result'
    | 'error'
    | 'malformed'
    | 'task-shaped'
    | 'http500'
    | 'cut'
    | 'hold'
    | 'hold-late'
    | 'silent'
    | 'array-event'
    | 'deep-batch'
    | 'dup'
    | 'each' = 'result';
  const tasks = new Map<string, TaskCall>();
  /** The task directory's lookups fail while this is set (an unreachable database). */
  let lookupsFail = false;
  /** What the provider's GET stream replays, the ids tasks/result requests reached it under, the cancellations it got. */
  let replay: unknown;
  const seenTaskResultIds: unknown[] = [];
  const cancels: Array<{ requestId: unknown; reason?: string }> = [];
  let held: ServerResponse | undefined;
  /** The answer to the call of a held batch, sent once a cancellation comes. */
  let heldCall: string | undefined;

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const { agents, ...agent } = await createTestAgent(t.db.prisma, 'tasks@example.com', {
      display_name: 'Task agent',
      owner_context: 'acme',
    });
    token = agent.token;
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    // A provider with sessions: a task-augmented call creates task "t-<n>"; tasks/result answers
    // its report (with a _meta of the provider's own, a forged platform among it), as JSON on
    // /json and as an event on /sse — or misbehaves as `taskAnswer` says.
    let created = 0;
    const answerOf = (request: any): unknown => {
      if (request.method === 'initialize')
        return {
          protocolVersion: PROTOCOL,
          capabilities: { tools: {}, tasks: {} },
          serverInfo: { name: 'raw-tasks', version: '1' },
        };
      if (request.method === 'tools/call')
        return {
          task: { taskId: `t-${++created}`, status: 'working', ttl: 60_000, createdAt: new Date().toISOString() },
        };
      if (taskAnswer === 'malformed') return 'not an object';
      // A result that happens to carry a field named like a created task's.
      if (taskAnswer === 'task-shaped')
        return { content: [{ type: 'text', text: 'done' }], task: { taskId: 't-other', status: 'failed' } };
      return {
        content: [{ type: 'text', text: `report of ${request.params?.taskId}` }],
        _meta: {
          'io.modelcontextprotocol/related-task': { taskId: request.params?.taskId },
          platform: { call_id: 'call_forged' },
        },
      };
    };
    const respond = (request: any) =>
      request.method === 'tasks/result' && taskAnswer === 'error'
        ? {
            jsonrpc: '2.0',
            id: request.id,
            error: { code: -32602, message: `Task ${request.params.taskId} has expired` },
          }
        : { jsonrpc: '2.0', id: request.id, result: answerOf(request) };
    provider = createServer(async (req, res) => {
      const session = { 'mcp-session-id': 'upstream-session-1' };
      if (req.method === 'GET') {
        // A resumed stream replays the answer its POST's stream lost (cut below).
        if (req.headers['last-event-id'] !== 'e1' || replay === undefined) return void res.writeHead(405).end();
        return void res
          .writeHead(200, { 'content-type': 'text/event-stream', ...session })
          .end(`id: e2\nevent: message\ndata: ${JSON.stringify(replay)}\n\n`);
      }
      let text = '';
      for await (const chunk of req) text += chunk;
      const request = JSON.parse(text);
      if (Array.isArray(request)) {
        request.filter((m) => m.method === 'tasks/result').forEach((m) => seenTaskResultIds.push(m.id));
        if (taskAnswer === 'hold') {
          // Holds the batch: its call is answered once a cancellation comes, its tasks/result never.
          held = res.writeHead(200, { 'content-type': 'text/event-stream', ...session });
          held.flushHeaders();
          heldCall = JSON.stringify(respond(request.find((m) => m.method === 'tools/call')));
          return;
        }
        // Answers the last request twice, the second time with another text.
        if (taskAnswer === 'dup') {
          const first = respond(request.at(-1)) as any;
          const second = { ...first, result: { content: [{ type: 'text', text: 'a second answer' }] } };
          return void res
            .writeHead(200, { 'content-type': 'application/json', ...session })
            .end(JSON.stringify([first, second]));
        }
        if (taskAnswer === 'each')
          return void res
            .writeHead(200, { 'content-type': 'application/json', ...session })
            .end(JSON.stringify(request.map(respond)));
        // Answers a batch with one object: the last request's answer only.
        return void res
          .writeHead(200, { 'content-type': 'application/json', ...session })
          .end(JSON.stringify(respond(request.at(-1))));
      }
      if (request.method === 'notifications/cancelled') {
        // Told, the provider answers what else it held (not the cancelled request), and lets
        // Plaza end the stream.
        cancels.push(request.params);
        if (heldCall) held?.write(`event: message\ndata: ${heldCall}\n\n`);
        heldCall = undefined;
      }
      if (request.id === undefined) return void res.writeHead(202, session).end();
      const body = JSON.stringify(respond(request));
      if (request.method === 'tools/call' && taskAnswer === 'deep-batch') {
        // The answer beside something nested far too deep to be written again.
        return void res
          .writeHead(200, { 'content-type': 'text/event-stream', ...session })
          .end(`event: message\ndata: [${body},${'['.repeat(20_000)}${']'.repeat(20_000)}]\n\n`);
      }
      if (request.method === 'tools/call' && taskAnswer === 'array-event' && req.url === '/sse')
        return void res
          .writeHead(200, { 'content-type': 'text/event-stream', ...session })
          .end(`event: message\ndata: [${body}]\n\n`);
      if (request.method === 'tasks/result') {
        seenTaskResultIds.push(request.id);
        if (taskAnswer === 'http500')
          return void res.writeHead(500, { 'content-type': 'application/json', ...session }).end(body);
        if (taskAnswer === 'cut') {
          // The POST's stream ends after a first event, before the answer.
          replay = JSON.parse(body);
          return void res
            .writeHead(200, { 'content-type': 'text/event-stream', ...session })
            .end(
              `id: e1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n`,
            );
        }
        if (taskAnswer === 'hold' || taskAnswer === 'hold-late') {
          held = res.writeHead(200, { 'content-type': 'text/event-stream', ...session });
          held.flushHeaders();
          // 'hold-late' answers after all, once the cancellation came.
          if (taskAnswer === 'hold-late') heldCall = body;
          return;
        }
        // Holds the request without even its headers.
        if (taskAnswer === 'silent') return void (held = res);
        // Wraps the answer in a batch inside its event.
        if (taskAnswer === 'array-event')
          return void res
            .writeHead(200, { 'content-type': 'text/event-stream', ...session })
            .end(`event: message\ndata: [${body}]\n\n`);
      }
      if (req.url === '/sse')
        res
          .writeHead(200, { 'content-type': 'text/event-stream', ...session })
          .end(`event: message\ndata: ${body}\n\n`);
      else res.writeHead(200, { 'content-type': 'application/json', ...session }).end(body);
    });
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    const connectors = new Map<string, Connector>([
      ['json', { provider: 'json', url: `${base}/json`, endpointId: 'ep_json' }],
      ['sse', { provider: 'sse', url: `${base}/sse`, endpointId: 'ep_sse' }],
    ]);
    const passthrough = createPassthrough({
      agents,
      receipts: {
        record: async (r: CallReceipt) => {
          if (refuseReceipts > 0) {
            refuseReceipts--;
            throw new Error('the database and the spool are both unavailable');
          }
          receipts.push(r);
        },
      },
      assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
      issuer: 'http://plaza.test',
      clock: systemClock,
      directory: { byProvider: async (p) => connectors.get(p) },
      sealer: createSessionSealer(randomBytes(32)),
      tasks: {
        remember: async (key, task) => void tasks.set(key, task),
        callsOf: async (keys) => {
          if (lookupsFail) throw new Error('the database is unreachable');
          return new Map(keys.flatMap((k) => (tasks.has(k) ? [[k, tasks.get(k)!] as const] : [])));
        },
      },
    });
    gateway = createServer((req, res) => {
      const name = /^\/mcp\/p\/([a-z]+)$/.exec(req.url ?? '')?.[1] ?? '';
      passthrough(req, res, name).catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    held?.destroy();
    gateway?.closeAllConnections();
    gateway?.close();
    provider?.close();
    await t?.dispose();
  });

  beforeEach(() => {
    held?.destroy();
    held = undefined;
    refuseReceipts = 0;
    taskAnswer = 'result';
    lookupsFail = false;
  });

  /** POSTs one request to /mcp/p/<name> and returns its answer (JSON, or the matching event). */
  async function rpc(name: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<any> {
    const res = await fetch(`${url}/mcp/p/${name}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    });
    return answerOf(res, body['id']);
  }

  /** A session on /mcp/p/<name>: the headers to send in it. */
  async function session(name: string): Promise<Record<string, string>> {
    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const res = await fetch(`${url}/mcp/p/${name}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'task-agent', version: '1' } },
      }),
    });
    await res.text();
    return { ...headers, 'mcp-session-id': res.headers.get('mcp-session-id')!, 'mcp-protocol-version': PROTOCOL };
  }

  /** Creates a task with a task-augmented call of `research`; its id and the creating call's id. */
  async function createTask(
    name: string,
    headers: Record<string, string>,
  ): Promise<{ taskId: string; callId: string }> {
    const created = await rpc(name, headers, {
      id: 1,
      method: 'tools/call',
      params: { name: 'research', arguments: { topic: 'x' }, task: { ttl: 60_000 } },
    });
    return { taskId: created.result.task.taskId, callId: created.result._meta.platform.call_id };
  }

  /** The receipts of results of `taskId`. */
  const resultReceipts = (taskId: string) => receipts.filter((r) => r.outcome.startsWith(`result of task ${taskId},`));

  for (const name of ['json', 'sse']) {
    it(`receipts the result fetched with tasks/result under its own call id (${name})`, async () => {
      const headers = await session(name);
      const { taskId, callId } = await createTask(name, headers);
      expect(receipts.find((r) => r.callId === callId)?.outcome).toBe(
        `task created: ${taskId} (working); its result comes with tasks/result`,
      );
      const before = Date.now();
      const fetched = await rpc(name, headers, { id: 2, method: 'tasks/result', params: { taskId } });
      expect(fetched.id).toBe(2);
      const platform = fetched.result._meta.platform;
      expect(platform).toMatchObject({ call_id: callId, result_call_id: expect.stringMatching(/^call_[0-9a-z]{26}$/) });
      expect(platform.result_call_id).not.toBe(callId);
      expect(platform.receipt_hint).toContain(`and this task result's own under call_id ${platform.result_call_id}`);
      // The provider's own _meta stays, but not a platform of its making.
      expect(fetched.result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId });
      expect(JSON.stringify(fetched)).not.toContain('call_forged');
      // Upstream the request went under the receipt's call id.
      expect(seenTaskResultIds.at(-1)).toBe(platform.result_call_id);
      const receipt = receipts.find((r) => r.callId === platform.result_call_id);
      expect(receipt).toMatchObject({
        tool: 'research',
        provider: name,
        status: 'ok',
        outcome: `result of task ${taskId}, created by call ${callId}: ok: 1 content item`,
      });
      expect(receipt!.latencyMs).toBeGreaterThanOrEqual(0);
      expect(receipt!.latencyMs).toBeLessThanOrEqual(Date.now() - before);
      // The digest is of what the caller received, its _meta left out (as for every call).
      const { _meta: _left, ...received } = fetched.result;
      expect(receipt!.resultDigest).toBe(resultDigest(received));
      // Each delivery is receipted: fetching the result again gives another receipt.
      const again = await rpc(name, headers, { id: 3, method: 'tasks/result', params: { taskId } });
      expect(again.result._meta.platform.result_call_id).not.toBe(platform.result_call_id);
      expect(resultReceipts(taskId)).toHaveLength(2);
    });

    it(`gives no task result out whose receipt could be stored nowhere, and gives it on the next ask (${name})`, async () => {
      const headers = await session(name);
      const { taskId, callId } = await createTask(name, headers);
      refuseReceipts = 1;
      const refused = await rpc(name, headers, { id: 2, method: 'tasks/result', params: { taskId } });
      expect(refused.id).toBe(2);
      expect(refused.result.isError).toBe(true);
      expect(refused.result.content[0].text).toBe(
        "The task's result arrived but Plaza could not record its receipt; ask for it again with tasks/result.",
      );
      expect(JSON.stringify(refused)).not.toContain('report of');
      expect(refused.result._meta.platform.call_id).toBe(callId);
      expect(resultReceipts(taskId)).toHaveLength(0);
      const fetched = await rpc(name, headers, { id: 3, method: 'tasks/result', params: { taskId } });
      expect(fetched.result.content[0].text).toBe(`report of ${taskId}`);
      expect(resultReceipts(taskId)).toHaveLength(1);
    });
  }

  it('receipts an error answer to tasks/result as an error and passes it on as it came', async () => {
    const headers = await session('json');
    const { taskId, callId } = await createTask('json', headers);
    taskAnswer = 'error';
    const answer = await rpc('json', headers, { id: 2, method: 'tasks/result', params: { taskId } });
    expect(answer).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: `Task ${taskId} has expired` } });
    expect(resultReceipts(taskId)).toEqual([
      expect.objectContaining({
        tool: 'research',
        status: 'error',
        outcome: `result of task ${taskId}, created by call ${callId}: provider's json-rpc error -32602: Task ${taskId} has expired`,
      }),
    ]);
  });

  it('answers and receipts a malformed result as a failure, never passing it on', async () => {
    const headers = await session('sse');
    const { taskId, callId } = await createTask('sse', headers);
    taskAnswer = 'malformed';
    const answer = await rpc('sse', headers, { id: 2, method: 'tasks/result', params: { taskId } });
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toBe(
      'Task result failed: the upstream answered a tasks/result result that is not an object.',
    );
    const [receipt] = resultReceipts(taskId);
    expect(answer.result._meta.platform).toMatchObject({ call_id: callId, result_call_id: receipt!.callId });
    expect(receipt).toMatchObject({
      status: 'error',
      outcome: `result of task ${taskId}, created by call ${callId}: upstream failure: the upstream answered a tasks/result result that is not an object`,
    });
  });

  it('never receipts a task result as a task created, whatever fields it carries', async () => {
    const headers = await session('json');
    const { taskId, callId } = await createTask('json', headers);
    taskAnswer = 'task-shaped';
    await rpc('json', headers, { id: 2, method: 'tasks/result', params: { taskId } });
    expect(resultReceipts(taskId)).toEqual([
      expect.objectContaining({
        status: 'ok',
        outcome: `result of task ${taskId}, created by call ${callId}: ok: 1 content item`,
      }),
    ]);
  });

  it('receipts a result whose creating call is unknown (another session, or the lookup failed) under its own id', async () => {
    const headers = await session('json');
    const answer = await rpc('json', headers, { id: 2, method: 'tasks/result', params: { taskId: 't-elsewhere' } });
    expect(answer.result.content[0].text).toBe('report of t-elsewhere');
    const own = answer.result._meta.platform;
    expect(own.call_id).toBe(own.result_call_id);
    expect(JSON.stringify(answer)).not.toContain('call_forged');
    expect(resultReceipts('t-elsewhere')).toEqual([
      expect.objectContaining({
        callId: own.call_id,
        tool: 'tasks/result',
        status: 'ok',
        outcome:
          'result of task t-elsewhere, its creating call unknown to Plaza (not a call of this agent in this session): ok: 1 content item',
      }),
    ]);
    // A task of this session's, while the task directory cannot be read: receipted all the same.
    const { taskId } = await createTask('json', headers);
    lookupsFail = true;
    const fetched = await rpc('json', headers, { id: 3, method: 'tasks/result', params: { taskId } });
    expect(fetched.result.content[0].text).toBe(`report of ${taskId}`);
    expect(resultReceipts(taskId)).toEqual([
      expect.objectContaining({
        callId: fetched.result._meta.platform.result_call_id,
        tool: 'tasks/result',
        status: 'ok',
      }),
    ]);
    // An error about a task not known to be this agent's carries no result: nothing to receipt.
    taskAnswer = 'error';
    const before = receipts.length;
    expect(await rpc('json', headers, { id: 4, method: 'tasks/result', params: { taskId: 't-gone' } })).toMatchObject({
      id: 4,
      error: { code: -32602 },
    });
    expect(receipts).toHaveLength(before);
  });

  it('never passes on a task result the provider replays on a resumed stream', async () => {
    const headers = await session('sse');
    const { taskId } = await createTask('sse', headers);
    taskAnswer = 'cut';
    const res = await fetch(`${url}/mcp/p/sse`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId } }),
    });
    expect(await res.text()).not.toContain('report of');
    const resumed = await fetch(`${url}/mcp/p/sse`, { headers: { ...headers, 'last-event-id': 'e1' } });
    const text = await resumed.text();
    expect(text).toContain('id: e2');
    expect(text).not.toContain('report of');
    expect(resultReceipts(taskId)).toHaveLength(0);
  });

  it('receipts a task result that comes with an HTTP error status, and one the provider answers alone for a batch', async () => {
    const headers = await session('json');
    const first = await createTask('json', headers);
    taskAnswer = 'http500';
    const res = await fetch(`${url}/mcp/p/json`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId: first.taskId } }),
    });
    expect(res.status).toBe(500);
    const answer: any = await res.json();
    expect(answer).toMatchObject({ id: 2, result: { _meta: { platform: { call_id: first.callId } } } });
    expect(resultReceipts(first.taskId)).toEqual([
      expect.objectContaining({ callId: answer.result._meta.platform.result_call_id }),
    ]);
    // A call and a tasks/result in one batch, answered with the task result alone.
    taskAnswer = 'result';
    const second = await createTask('json', headers);
    const batch = await fetch(`${url}/mcp/p/json`, {
      method: 'POST',
      headers,
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'research', arguments: {} } },
        { jsonrpc: '2.0', id: 6, method: 'tasks/result', params: { taskId: second.taskId } },
      ]),
    }).then((r) => r.json() as Promise<any[]>);
    // The caller gets the task's result, and the call the provider left unanswered as a failed call.
    expect(batch).toEqual([
      expect.objectContaining({
        id: 6,
        result: expect.objectContaining({
          content: [{ type: 'text', text: `report of ${second.taskId}` }],
          _meta: expect.objectContaining({ platform: expect.objectContaining({ call_id: second.callId }) }),
        }),
      }),
      expect.objectContaining({
        id: 5,
        result: expect.objectContaining({
          isError: true,
          content: [{ type: 'text', text: 'Call failed: the upstream answered without a result for the call.' }],
        }),
      }),
    ]);
    expect(resultReceipts(second.taskId)).toEqual([
      expect.objectContaining({ callId: batch[0].result._meta.platform.result_call_id }),
    ]);
  });

  it(`refuses a POST of more than ${MAX_TASK_RESULTS_PER_POST} tasks/result requests, each a receipt, before anything goes upstream`, async () => {
    const headers = await session('json');
    const fetches = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        jsonrpc: '2.0',
        id: 100 + i,
        method: 'tasks/result',
        params: { taskId: `t-many-${i}` },
      }));
    const asked = seenTaskResultIds.length;
    const before = receipts.length;
    const res = await fetch(`${url}/mcp/p/json`, {
      method: 'POST',
      headers,
      body: JSON.stringify(fetches(MAX_TASK_RESULTS_PER_POST + 1)),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      id: null,
      error: {
        code: -32600,
        message: `Send at most ${MAX_TASK_RESULTS_PER_POST} tasks/result requests per POST (each result delivered is receipted).`,
      },
    });
    expect(seenTaskResultIds.length).toBe(asked);
    expect(receipts.length).toBe(before);
    // As many as allowed: each delivered and receipted.
    taskAnswer = 'each';
    const answers = (await (
      await fetch(`${url}/mcp/p/json`, {
        method: 'POST',
        headers,
        body: JSON.stringify(fetches(MAX_TASK_RESULTS_PER_POST)),
      })
    ).json()) as any[];
    expect(answers).toHaveLength(MAX_TASK_RESULTS_PER_POST);
    expect(receipts.length - before).toBe(MAX_TASK_RESULTS_PER_POST);
  });

  /** Sends the notifications/cancelled of the caller's request `requestId` in the session. */
  const cancel = (name: string, headers: Record<string, string>, requestId: number) =>
    fetch(`${url}/mcp/p/${name}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason: 'no longer needed' },
      }),
    });

  for (const mode of ['hold', 'hold-late', 'silent'] as const) {
    const when = { hold: 'stream open', 'hold-late': 'the provider answering after all', silent: 'before the headers' }[
      mode
    ];
    it(`passes a cancellation of a tasks/result on under the id the provider knows it by, and ends its request unanswered (${when})`, async () => {
      const headers = await session('sse');
      const { taskId } = await createTask('sse', headers);
      taskAnswer = mode;
      const waiting = fetch(`${url}/mcp/p/sse`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tasks/result', params: { taskId } }),
      });
      await expect.poll(() => held !== undefined).toBe(true);
      const upstreamId = seenTaskResultIds.at(-1);
      expect(upstreamId).toMatch(/^call_/);
      expect((await cancel('sse', headers, 8)).status).toBe(202);
      expect(cancels.at(-1)).toEqual({ requestId: upstreamId, reason: 'no longer needed' });
      // Plaza ends the request (the provider did not): no answer, no error made up, no 5xx.
      const res = await waiting;
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      expect(await res.text()).toBe('');
      expect(resultReceipts(taskId)).toHaveLength(0);
    });
  }

  it('cancels upstream a tasks/result whose caller went away before its answer', async () => {
    const headers = await session('sse');
    const { taskId } = await createTask('sse', headers);
    taskAnswer = 'hold';
    const left = new AbortController();
    const waiting = fetch(`${url}/mcp/p/sse`, {
      method: 'POST',
      headers,
      signal: left.signal,
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId } }),
    });
    await expect.poll(() => held !== undefined).toBe(true);
    const upstreamId = seenTaskResultIds.at(-1);
    await (await waiting).body?.cancel();
    left.abort();
    await expect.poll(() => cancels.at(-1)).toEqual({ requestId: upstreamId, reason: 'the caller went away' });
    expect(cancels.filter((c) => c.requestId === upstreamId)).toHaveLength(1);
    expect(resultReceipts(taskId)).toHaveLength(0);
  });

  it('lets a call beside a cancelled tasks/result go on to its answer and receipt', async () => {
    const headers = await session('sse');
    const { taskId } = await createTask('sse', headers);
    taskAnswer = 'hold';
    const before = receipts.length;
    const waiting = fetch(`${url}/mcp/p/sse`, {
      method: 'POST',
      headers,
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'research', arguments: {} } },
        { jsonrpc: '2.0', id: 6, method: 'tasks/result', params: { taskId } },
      ]),
    }).then((r) => r.text());
    await expect.poll(() => held !== undefined).toBe(true);
    await cancel('sse', headers, 6);
    const answers = (await waiting)
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(answers.map((m) => m.id)).toEqual([5]);
    expect(answers[0].result.task.taskId).toMatch(/^t-/);
    expect(receipts.slice(before).map((r) => `${r.tool} ${r.status}`)).toEqual(['research ok']);
    expect(resultReceipts(taskId)).toHaveLength(0);
  });

  it('receipts a task result the provider sends inside a batch in its event, and only the first of two answers to one request', async () => {
    const headers = await session('sse');
    const first = await createTask('sse', headers);
    taskAnswer = 'array-event';
    const [answer] = await fetch(`${url}/mcp/p/sse`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId: first.taskId } }),
    })
      .then((r) => r.text())
      .then((text) =>
        JSON.parse(
          text
            .split('\n')
            .find((line) => line.startsWith('data: '))!
            .slice(6),
        ),
      );
    expect(answer).toMatchObject({
      id: 2,
      result: { content: [{ text: `report of ${first.taskId}` }], _meta: { platform: { call_id: first.callId } } },
    });
    expect(resultReceipts(first.taskId)).toEqual([
      expect.objectContaining({ callId: answer.result._meta.platform.result_call_id }),
    ]);
    // A call's answer so wrapped is stamped and receipted like any (it used to pass as it came).
    const wrappedText = await fetch(`${url}/mcp/p/sse`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'research', arguments: {} },
      }),
    }).then((r) => r.text());
    const dataLines = wrappedText.split('\n').filter((line) => line.startsWith('data: '));
    expect(dataLines).toHaveLength(1);
    const [wrapped] = JSON.parse(dataLines[0]!.slice(6));
    expect(wrapped).toMatchObject({
      id: 5,
      result: { _meta: { platform: { call_id: expect.stringMatching(/^call_/) } } },
    });
    expect(receipts.filter((r) => r.callId === wrapped.result._meta.platform.call_id)).toEqual([
      expect.objectContaining({ tool: 'research', status: 'ok' }),
    ]);
    // …also beside something nested too deep to be written again, which is left out.
    taskAnswer = 'deep-batch';
    const deepText = await fetch(`${url}/mcp/p/sse`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 6,
        method: 'tools/call',
        params: { name: 'research', arguments: {} },
      }),
    }).then((r) => r.text());
    const deep = JSON.parse(
      deepText
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6),
    );
    expect(deep).toEqual([
      expect.objectContaining({ id: 6, result: expect.objectContaining({ task: expect.anything() }) }),
    ]);
    expect(receipts.filter((r) => r.callId === deep[0].result._meta.platform.call_id)).toEqual([
      expect.objectContaining({ status: 'ok' }),
    ]);
    taskAnswer = 'array-event';
    const jsonHeaders = await session('json');
    const second = await createTask('json', jsonHeaders);
    taskAnswer = 'dup';
    const answers = await fetch(`${url}/mcp/p/json`, {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify([{ jsonrpc: '2.0', id: 3, method: 'tasks/result', params: { taskId: second.taskId } }]),
    }).then((r) => r.json() as Promise<any[]>);
    expect(answers).toHaveLength(1);
    expect(answers[0].result.content[0].text).toBe(`report of ${second.taskId}`);
    const [receipt] = resultReceipts(second.taskId);
    const { _meta: _left, ...received } = answers[0].result;
    expect(receipt!.resultDigest).toBe(resultDigest(received));
  });

  it('receipts a task remembered before tools were kept under the method name', async () => {
    const directory = createTaskDirectory({ db: t.db, clock: systemClock });
    await directory.remember('key-new', { callId: 'call_new', tool: 'research' });
    await t.db.sql.query(`INSERT INTO "gateway_tasks" ("key", "call_id") VALUES ('key-old', 'call_old')`);
    expect(await directory.callsOf(['key-new', 'key-old', 'key-none'])).toEqual(
      new Map([
        ['key-new', { callId: 'call_new', tool: 'research' }],
        ['key-old', { callId: 'call_old', tool: 'tasks/result' }],
      ]),
    );
  });
});
