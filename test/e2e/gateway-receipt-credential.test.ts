/**
 * A caller's third-party credential never reaches a receipt, whatever text of the provider's
 * carries it: here a provider that names the task of a task-augmented call after the credential
 * the caller sent (X-PLATFORM-Upstream-Authorization, which reaches it as Authorization). Through
 * the running app: neither the "task created" receipt nor the receipt of the `tasks/result` that
 * follows holds it — not in the database, not in `GET /api/receipts`, not in the export.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { accountApi, listHealthy } from '../support/gateway-load.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const PROTOCOL = '2025-11-25';
const CREDENTIAL = 'tp-Cred3ntial-0f-the-caller-9c41';

describe('a task id that is the caller’s upstream credential', () => {
  let plaza: TestPlaza;
  let provider: Server;
  let apiKey = '';
  let token = '';

  beforeAll(async () => {
    // A provider with sessions whose task-augmented calls name their task after the Authorization
    // header they came with (`whole`: the header's value; else the credential past its scheme).
    let sessions = 0;
    provider = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        if (req.method !== 'POST') {
          res.writeHead(405).end();
          return;
        }
        const request = JSON.parse(text) as { id?: number | string; method: string; params?: any };
        if (request.id === undefined) {
          res.writeHead(202).end();
          return;
        }
        const authorization = req.headers.authorization ?? '';
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'mcp-session-id': String(req.headers['mcp-session-id'] ?? `s-${++sessions}`),
        };
        let result: unknown;
        if (request.method === 'initialize')
          result = {
            protocolVersion: PROTOCOL,
            capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
            serverInfo: { name: 'echoing-tasks', version: '1' },
          };
        else if (request.method === 'tools/list')
          result = {
            tools: [
              {
                name: 'report',
                description: 'A report, as a task.',
                inputSchema: { type: 'object' },
                execution: { taskSupport: 'optional' },
              },
            ],
          };
        else if (request.method === 'tools/call') {
          const taskId =
            request.params?.arguments?.whole === true ? authorization : authorization.replace(/^Bearer /, '');
          result = { task: { taskId, status: 'working', ttl: 60_000, createdAt: new Date().toISOString() } };
        } else if (request.method === 'tasks/result') result = { content: [{ type: 'text', text: 'the report' }] };
        else result = {};
        res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    plaza = await startTestPlaza('pglite', {
      env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'warn', PLAZA_RECEIPTS_CHECKPOINT_INTERVAL_S: '1' },
    });
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'echoing-tasks@example.com',
      })
    ).apiKey;
    token = (await accountApi(plaza.url, apiKey)('/api/agents', { display_name: 'Task agent' })).data.token;
    await listHealthy(plaza.url, 'echoer', `http://127.0.0.1:${(provider.address() as AddressInfo).port}/mcp`);
  }, 60_000);

  afterAll(async () => {
    await plaza?.close();
    await new Promise((resolve) => provider?.close(resolve));
  });

  async function rpc(
    headers: Record<string, string>,
    id: number,
    method: string,
    params: unknown,
  ): Promise<{ session: string | null; answer: any }> {
    const res = await fetch(`${plaza.url}/mcp/p/echoer`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    return { session: res.headers.get('mcp-session-id'), answer: await res.json() };
  }

  it.each([
    ['the credential', false],
    ['the whole header value', true],
  ])(
    'keeps it out of the tasks/result receipt when the task id is %s',
    async (_label, whole) => {
      const credential = { 'x-platform-upstream-authorization': `Bearer ${CREDENTIAL}` };
      const init = await rpc(credential, 1, 'initialize', {
        protocolVersion: PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'task-agent', version: '1' },
      });
      const session = { ...credential, 'mcp-session-id': init.session! };
      const created = await rpc(session, 2, 'tools/call', {
        name: 'report',
        arguments: { whole },
        task: { ttl: 60_000 },
      });
      const taskId = created.answer.result.task.taskId as string;
      // The caller gets what the provider answered: its task id is the caller's to use.
      expect(taskId).toContain(CREDENTIAL);
      const fetched = await rpc(session, 3, 'tasks/result', { taskId });
      expect(fetched.answer.result.content[0].text).toBe('the report');
      const callId = created.answer.result._meta.platform.call_id as string;
      const resultCallId = fetched.answer.result._meta.platform.result_call_id as string;

      const stored = await plaza.db.prisma.$queryRawUnsafe<{ call_id: string; outcome: string; tool: string }[]>(
        `SELECT "call_id", "outcome", "tool" FROM "receipts" WHERE "call_id" IN ($1, $2)`,
        callId,
        resultCallId,
      );
      expect(stored.map((r) => r.call_id).sort()).toEqual([callId, resultCallId].sort());
      const ofResult = stored.find((r) => r.call_id === resultCallId)!;
      expect(ofResult.outcome).toBe(
        `result of task [credential removed], created by call ${callId}: ok: 1 content item`,
      );
      for (const receipt of stored) expect(JSON.stringify(receipt)).not.toContain(CREDENTIAL);

      const listed = await fetch(`${plaza.url}/api/receipts`, { headers: { authorization: `Bearer ${apiKey}` } });
      const listedText = await listed.text();
      expect(listedText).toContain(resultCallId);
      expect(listedText).not.toContain(CREDENTIAL);
      // The export covers what its checkpoint covers: wait for one past this receipt.
      await expect
        .poll(
          async () => {
            const exported = await (
              await fetch(`${plaza.url}/api/receipts/export`, { headers: { authorization: `Bearer ${apiKey}` } })
            ).text();
            return exported.includes(resultCallId) ? exported : '';
          },
          { timeout: 20_000, interval: 500 },
        )
        .not.toBe('');
      const exported = await (
        await fetch(`${plaza.url}/api/receipts/export`, { headers: { authorization: `Bearer ${apiKey}` } })
      ).text();
      expect(exported).not.toContain(CREDENTIAL);
    },
    40_000,
  );
});
