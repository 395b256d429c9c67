/**
 * The receipt of a task's result (MCP tasks): a tools/call answered with a task is receipted as
 * "task created", and the result the caller fetches later with tasks/result gets a receipt of its
 * own — its own call id (named in the result as `result_call_id`), the creating call's tool, an
 * outcome naming the task and the call, the digest of what the caller received — before it goes
 * back, over JSON and over an event stream. A result whose receipt can be stored nowhere is not
 * given out. The provider is a small raw server, so its answers (and failures) are exact.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type CallReceipt, type Connector, createPassthrough, createSessionSealer, resultDigest, type TaskCall } from '../../gateway/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

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
  /** What the provider answers to tasks/result: a result, or a JSON-RPC error. */
  let taskAnswer: 'result' | 'error' = 'result';
  const tasks = new Map<string, TaskCall>();

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const account = await createAccountService({ prisma: t.db.prisma, clock: systemClock }).createAccount({ email: 'tasks@example.com' });
    const agents = createAgentService({ prisma: t.db.prisma, clock: systemClock });
    token = (await agents.create(account.account.id, { display_name: 'Task agent', owner_context: 'acme' })).token;
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    // A provider with sessions: a task-augmented call creates task "t-<n>"; tasks/result answers
    // its report (with a _meta of the provider's own), as JSON on /json and as an event on /sse.
    let created = 0;
    provider = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const request = JSON.parse(text);
      const session = { 'mcp-session-id': 'upstream-session-1' };
      if (request.id === undefined) return void res.writeHead(202, session).end();
      let answer: unknown;
      if (request.method === 'initialize') answer = { protocolVersion: PROTOCOL, capabilities: { tools: {}, tasks: {} }, serverInfo: { name: 'raw-tasks', version: '1' } };
      else if (request.method === 'tools/call') answer = { task: { taskId: `t-${++created}`, status: 'working', ttl: 60_000, createdAt: new Date().toISOString() } };
      else if (request.method === 'tasks/result' && taskAnswer === 'error') {
        const body = JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32602, message: `Task ${request.params.taskId} has expired` } });
        return void res.writeHead(200, { 'content-type': 'application/json', ...session }).end(body);
      } else answer = { content: [{ type: 'text', text: `report of ${request.params.taskId}` }], _meta: { 'io.modelcontextprotocol/related-task': { taskId: request.params.taskId } } };
      const body = JSON.stringify({ jsonrpc: '2.0', id: request.id, result: answer });
      if (req.url === '/sse') res.writeHead(200, { 'content-type': 'text/event-stream', ...session }).end(`event: message\ndata: ${body}\n\n`);
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
        callsOf: async (keys) => new Map(keys.flatMap((k) => (tasks.has(k) ? [[k, tasks.get(k)!] as const] : []))),
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
    gateway?.closeAllConnections();
    gateway?.close();
    provider?.close();
    await t?.dispose();
  });

  beforeEach(() => {
    refuseReceipts = 0;
    taskAnswer = 'result';
  });

  /** POSTs one request to /mcp/p/<name> and returns its answer (JSON, or the matching event). */
  async function rpc(name: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<any> {
    const res = await fetch(`${url}/mcp/p/${name}`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', ...body }) });
    const text = await res.text();
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
    return text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)))
      .find((m) => m.id === body['id']);
  }

  /** A session on /mcp/p/<name>: the headers to send in it. */
  async function session(name: string): Promise<Record<string, string>> {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const res = await fetch(`${url}/mcp/p/${name}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'task-agent', version: '1' } } }),
    });
    await res.text();
    return { ...headers, 'mcp-session-id': res.headers.get('mcp-session-id')!, 'mcp-protocol-version': PROTOCOL };
  }

  /** Creates a task with a task-augmented call of `research`; its id and the creating call's id. */
  async function createTask(name: string, headers: Record<string, string>): Promise<{ taskId: string; callId: string }> {
    const created = await rpc(name, headers, { id: 1, method: 'tools/call', params: { name: 'research', arguments: { topic: 'x' }, task: { ttl: 60_000 } } });
    return { taskId: created.result.task.taskId, callId: created.result._meta.platform.call_id };
  }

  for (const name of ['json', 'sse']) {
    it(`receipts the result fetched with tasks/result under its own call id (${name})`, async () => {
      const headers = await session(name);
      const { taskId, callId } = await createTask(name, headers);
      expect(receipts.find((r) => r.callId === callId)?.outcome).toBe(`task created: ${taskId} (working); its result comes with tasks/result`);
      const fetched = await rpc(name, headers, { id: 2, method: 'tasks/result', params: { taskId } });
      const platform = fetched.result._meta.platform;
      expect(platform).toMatchObject({ call_id: callId, result_call_id: expect.stringMatching(/^call_[0-9a-z]{26}$/) });
      expect(platform.result_call_id).not.toBe(callId);
      expect(platform.receipt_hint).toContain(`one of this task result under call_id ${platform.result_call_id}`);
      const receipt = receipts.find((r) => r.callId === platform.result_call_id);
      expect(receipt).toMatchObject({ tool: 'research', provider: name, status: 'ok', outcome: `result of task ${taskId}, created by call ${callId}: ok: 1 content item` });
      // The digest is of what the caller received, its _meta left out (as for every call).
      const { _meta: _left, ...received } = fetched.result;
      expect(receipt!.resultDigest).toBe(resultDigest(received));
      // Each delivery is receipted: fetching the result again gives another receipt.
      const again = await rpc(name, headers, { id: 3, method: 'tasks/result', params: { taskId } });
      expect(again.result._meta.platform.result_call_id).not.toBe(platform.result_call_id);
      expect(receipts.filter((r) => r.outcome.startsWith(`result of task ${taskId},`))).toHaveLength(2);
    });
  }

  it('gives no task result out whose receipt could be stored nowhere, and gives it on the next ask', async () => {
    const headers = await session('json');
    const { taskId, callId } = await createTask('json', headers);
    refuseReceipts = 1;
    const refused = await rpc('json', headers, { id: 2, method: 'tasks/result', params: { taskId } });
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0].text).toBe("The task's result arrived but Plaza could not record its receipt; ask for it again with tasks/result.");
    expect(JSON.stringify(refused)).not.toContain('report of');
    expect(refused.result._meta.platform.call_id).toBe(callId);
    expect(receipts.some((r) => r.outcome.startsWith(`result of task ${taskId},`))).toBe(false);
    const fetched = await rpc('json', headers, { id: 3, method: 'tasks/result', params: { taskId } });
    expect(fetched.result.content[0].text).toBe(`report of ${taskId}`);
    expect(receipts.filter((r) => r.outcome.startsWith(`result of task ${taskId},`))).toHaveLength(1);
  });

  it('receipts an error answer to tasks/result as an error and passes it on as it came', async () => {
    const headers = await session('json');
    const { taskId, callId } = await createTask('json', headers);
    taskAnswer = 'error';
    const answer = await rpc('json', headers, { id: 2, method: 'tasks/result', params: { taskId } });
    expect(answer).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: `Task ${taskId} has expired` } });
    const receipt = receipts.find((r) => r.outcome.startsWith(`result of task ${taskId},`));
    expect(receipt).toMatchObject({ tool: 'research', status: 'error', outcome: `result of task ${taskId}, created by call ${callId}: json-rpc error -32602: Task ${taskId} has expired` });
  });

  it('receipts nothing for a tasks/result about a task no call of the session created', async () => {
    const headers = await session('json');
    const before = receipts.length;
    const answer = await rpc('json', headers, { id: 2, method: 'tasks/result', params: { taskId: 't-unknown' } });
    expect(answer.result.content[0].text).toBe('report of t-unknown');
    expect(answer.result._meta.platform).toBeUndefined();
    expect(receipts).toHaveLength(before);
  });
});
