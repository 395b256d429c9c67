/**
 * Clients that ask for large answers and never read them cannot make Plaza hold those answers
 * without bound: 30 raw-socket clients of three agents ask `/mcp` and `/mcp/p/<provider>` (JSON
 * and an event stream) for a 24 MB tool answer and read nothing. The gateway's own count of the
 * answer bytes it holds stays within its limits (per agent, in all) the whole time, `/health`
 * keeps answering, every call has one receipt, the answers past the limits are let go (the caller
 * told in-band), and the connections that hold an answer are closed after the write timeout — the
 * answer not delivered — after which Plaza holds nothing. Small limits keep it quick.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { accountApi, listHealthy } from '../support/gateway-load.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const MIB = 1024 * 1024;
const ANSWER_TEXT_BYTES = 24 * MIB;
const PER_AGENT = 50 * MIB;
const TOTAL = 100 * MIB;

/** A raw client that sends one request and reads nothing until told to. */
interface SilentClient {
  socket: Socket;
  /** Everything received, once read (see readAll). */
  readAll(): Promise<Buffer>;
}

function silentClient(port: number, path: string, token: string, body: unknown): Promise<SilentClient> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.pause();
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
      );
      resolve({
        socket,
        readAll: () =>
          new Promise((done) => {
            const chunks: Buffer[] = [];
            socket.on('data', (chunk: Buffer) => chunks.push(chunk));
            socket.on('error', () => undefined);
            socket.on('close', () => done(Buffer.concat(chunks)));
            socket.resume();
          }),
      });
    });
    socket.once('error', reject);
  });
}

describe('clients that never read their answers', () => {
  let plaza: TestPlaza;
  let provider: Server;
  let apiKey = '';
  const tokens: string[] = [];
  const agentIds: string[] = [];

  beforeAll(async () => {
    // One provider, two ways: a tool `big` whose answer holds a 24 MB text, as JSON under /json
    // and as one event of an event stream under /sse.
    const filler = Buffer.alloc(ANSWER_TEXT_BYTES, 'x');
    provider = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const request = JSON.parse(text) as { id?: number | string; method: string; params?: any };
        if (request.id === undefined) return void res.writeHead(202).end();
        const sse = req.url?.startsWith('/sse') === true;
        res.on('error', () => undefined);
        if (request.method === 'tools/call') {
          const head = `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":{"content":[{"type":"text","text":"`;
          const tail = '"}]}}';
          res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
          res.write(sse ? `event: message\ndata: ${head}` : head);
          res.write(filler);
          res.end(sse ? `${tail}\n\n` : tail);
          return;
        }
        const result =
          request.method === 'initialize'
            ? {
                protocolVersion: '2025-06-18',
                capabilities: { tools: {} },
                serverInfo: { name: 'big-answers', version: '1' },
              }
            : request.method === 'tools/list'
              ? { tools: [{ name: 'big', description: 'A 24 MB answer.', inputSchema: { type: 'object' } }] }
              : {};
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    plaza = await startTestPlaza('pglite', {
      env: {
        PLAZA_ALLOW_PRIVATE_TARGETS: '1',
        LOG_LEVEL: 'warn',
        PLAZA_GATEWAY_HELD_BYTES_PER_AGENT: String(PER_AGENT),
        PLAZA_GATEWAY_HELD_BYTES_TOTAL: String(TOTAL),
        PLAZA_GATEWAY_WRITE_TIMEOUT_MS: '500',
      },
    });
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'silent@example.com',
      })
    ).apiKey;
    const api = accountApi(plaza.url, apiKey);
    for (const name of ['A', 'B', 'C']) {
      const created = (await api('/api/agents', { display_name: `Silent agent ${name}` })).data;
      tokens.push(created.token);
      agentIds.push(created.agent.id);
    }
    await listHealthy(plaza.url, 'bigjson', `${base}/json/mcp`);
    await listHealthy(plaza.url, 'bigsse', `${base}/sse/mcp`);
  }, 60_000);

  afterAll(async () => {
    await plaza?.close();
    provider?.closeAllConnections();
    await new Promise((resolve) => provider?.close(resolve));
  });

  it('holds at most its limits, keeps /health answering, and cuts the connections that do not drain', async () => {
    const port = Number(new URL(plaza.url).port);
    const call = (id: number, name: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: {} },
    });
    const targets = [
      { path: '/mcp', name: 'bigjson__big' },
      { path: '/mcp/p/bigjson', name: 'big' },
      { path: '/mcp/p/bigsse', name: 'big' },
    ];
    let most = 0;
    let over = '';
    const sample = setInterval(() => {
      const total = plaza.heldAnswerBytes();
      most = Math.max(most, total);
      if (total > TOTAL) over ||= `${total} bytes held in all`;
      for (const agentId of agentIds) {
        const mine = plaza.heldAnswerBytes(agentId);
        if (mine > PER_AGENT) over ||= `${mine} bytes held for agent ${agentId}`;
      }
    }, 5);
    const clients = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const target = targets[i % 3]!;
        return silentClient(port, target.path, tokens[i % 3]!, call(i + 1, target.name));
      }),
    );
    try {
      // /health answers while the clients hold their connections.
      for (let i = 0; i < 5; i++) {
        const health = await fetch(`${plaza.url}/health`);
        expect(health.status).toBe(200);
        await health.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Once every connection that held an answer was cut, nothing is held.
      await expect.poll(() => plaza.heldAnswerBytes(), { timeout: 30_000, interval: 100 }).toBe(0);
    } finally {
      clearInterval(sample);
    }
    expect(over).toBe('');
    // It did hold answers (at least one whole), and let go of the rest.
    expect(most).toBeGreaterThanOrEqual(ANSWER_TEXT_BYTES);

    // What each client gets when it reads at last: the answers Plaza held were cut short (the
    // connection ended, the answer not delivered); the others were told in-band, whole.
    const received = await Promise.all(clients.map((client) => client.readAll()));
    let cut = 0;
    let told = 0;
    const toldRe =
      /not delivered: it did not fit in the memory Plaza keeps|have not read yet|as many unread answers as it may/;
    for (const bytes of received) {
      const text = bytes.toString('latin1');
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      if (bytes.length < 64 * 1024 && toldRe.test(text)) told++;
      else {
        // A held answer: the connection ended before all of it arrived.
        expect(bytes.length).toBeLessThan(ANSWER_TEXT_BYTES);
        cut++;
      }
    }
    expect(cut).toBeGreaterThan(0);
    expect(cut + told).toBe(30);
    for (const client of clients) client.socket.destroy();

    // One receipt per call, whatever became of its answer.
    const receipts = await plaza.db.prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "receipts" WHERE "tool" = 'big'`,
    );
    expect(receipts[0]!.n).toBe(30);
  }, 90_000);
});
