/**
 * Task-augmented tool calls (MCP tasks, protocol 2025-11-25) through `/mcp/p/<provider>`, against
 * server-everything's `simulate-research-query` and the official SDK client: the call that
 * creates the task is receipted as such, and the result fetched later with `tasks/result` — on
 * this instance or another one sharing the database — carries the creating call's id and is
 * receipted under an id of its own, for the agent that created it only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { accountApi, listHealthy } from '../support/gateway-load.ts';
import { answerIn } from '../support/json-rpc.ts';
import { agentSession } from '../support/mcp-session.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const TOOL = 'simulate-research-query';

describe('task-augmented calls through the passthrough', () => {
  let everything: EverythingServer;
  let plaza: TestPlaza;
  /** A second instance on the same database. */
  let other: TestPlaza;
  let tokens: { a: string; b: string };

  beforeAll(async () => {
    everything = await startEverything();
    plaza = await startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'warn' } });
    other = await startTestPlaza('pglite', {
      db: plaza.db,
      env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'warn', PLAZA_BACKGROUND: '0' },
    });
    const apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'tasks@example.com',
      })
    ).apiKey;
    const api = accountApi(plaza.url, apiKey);
    await listHealthy(plaza.url, 'everything', everything.url);
    tokens = {
      a: (await api('/api/agents', { display_name: 'Task agent A' })).data.token,
      b: (await api('/api/agents', { display_name: 'Task agent B' })).data.token,
    };
  }, 60_000);

  afterAll(async () => {
    await other?.close();
    await plaza?.close();
    await everything?.stop();
  });

  const session = (url: string, token: string) => agentSession(`${url}/mcp/p/everything`, token, 'task-agent');

  /** POSTs one JSON-RPC request and returns its answer (JSON or the matching SSE event). */
  async function rpc(
    url: string,
    headers: Record<string, string>,
    id: number,
    method: string,
    params: unknown,
  ): Promise<any> {
    const res = await fetch(`${url}/mcp/p/everything`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const text = await res.text();
    if (text === '') throw new Error(`${method} answered HTTP ${res.status} without a body`);
    return answerIn(text, res.headers.get('content-type'), id);
  }

  const receiptOf = async (callId: string) =>
    (
      await plaza.db.prisma.$queryRawUnsafe<{ status: string; outcome: string; tool: string }[]>(
        `SELECT "status", "outcome", "tool" FROM "receipts" WHERE "call_id" = $1`,
        callId,
      )
    )[0];
  const receiptsOfAgent = async (aginId: string) =>
    (
      await plaza.db.prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "receipts" WHERE "agin_id" = $1`,
        aginId,
      )
    )[0]!.n;

  it('stamps the result the SDK client fetches with tasks/result with the id of the call that created the task', async () => {
    const { client } = await session(plaza.url, tokens.a);
    let taskId: string | undefined;
    let result: any;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: TOOL, arguments: { topic: 'gateways' } },
      undefined,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(taskId).toEqual(expect.any(String));
    expect(result.content[0].text).toContain('Research Report');
    const callId = result._meta.platform.call_id as string;
    expect(callId).toMatch(/^call_/);
    expect(result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    // The creating call's receipt says what it created; the result has a receipt of its own.
    expect(await receiptOf(callId)).toEqual({
      status: 'ok',
      tool: TOOL,
      outcome: `task created: ${taskId} (working); its result comes with tasks/result`,
    });
    const resultCallId = result._meta.platform.result_call_id as string;
    expect(resultCallId).toMatch(/^call_/);
    expect(await receiptOf(resultCallId)).toEqual({
      status: 'ok',
      tool: TOOL,
      outcome: `result of task ${taskId}, created by call ${callId}: ok: 1 content item`,
    });
    await client.close();
  }, 30_000);

  it('stamps tasks/result on another instance, and never for another agent', async () => {
    const a = await session(plaza.url, tokens.a);
    const created = await rpc(plaza.url, a.headers, 7, 'tools/call', {
      name: TOOL,
      arguments: { topic: 'receipts' },
      task: { ttl: 60_000 },
    });
    const taskId = created.result.task.taskId as string;
    const callId = created.result._meta.platform.call_id as string;
    expect((await receiptOf(callId))?.outcome).toMatch(/^task created: /);
    // The session resumes on the other instance; so does the task's call.
    const fetched = await rpc(other.url, a.headers, 8, 'tasks/result', { taskId });
    expect(fetched.result.content[0].text).toContain('Research Report');
    expect(fetched.result._meta.platform).toMatchObject({
      call_id: callId,
      agin_id: created.result._meta.platform.agin_id,
    });
    // Receipted by the instance that relayed it, in the shared database.
    expect((await receiptOf(fetched.result._meta.platform.result_call_id))?.outcome).toBe(
      `result of task ${taskId}, created by call ${callId}: ok: 1 content item`,
    );
    // Agent B, in its own session, asking for A's task: whatever the provider says, no call of A's is named.
    const b = await session(plaza.url, tokens.b);
    const foreign = await rpc(plaza.url, b.headers, 9, 'tasks/result', { taskId });
    expect(JSON.stringify(foreign ?? null)).not.toContain(callId);
    // …and no receipt in B's name for a result that was never B's.
    const bAgin = (await rpc(plaza.url, b.headers, 10, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }))
      .result._meta.platform.agin_id as string;
    expect(await receiptsOfAgent(bAgin)).toBe(1);
    await Promise.all([a.client.close(), b.client.close()]);
  }, 30_000);
});
