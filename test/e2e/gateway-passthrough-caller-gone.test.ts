/**
 * A caller that leaves while the gateway is still preparing its call (signing the AGIN assertion,
 * looking up task results) is gone before the gateway listens for its leaving: the call must not
 * go upstream for nobody, nor stay registered as in flight.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';

import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CallReceipt, createPassthrough, createSessionSealer } from '../../gateway/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { listen } from '../support/listen.ts';

describe('gateway passthrough: a caller gone before its call is sent', () => {
  let t: TestDatabase;
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) s.close();
    await t?.dispose();
  });
  let token = '';
  let pair: Awaited<ReturnType<typeof generateKeyPair>>;
  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    token = (
      await createTestAgent(t.db.prisma, 'gone@example.com', { display_name: 'Gone agent', owner_context: 'acme' })
    ).token;
    pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  }, 60_000);

  it('does not send upstream the call of a caller that already left', async () => {
    const methods: string[] = [];
    const upstream = await listen(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text);
      methods.push(body.method);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { content: [{ type: 'text', text: 'done' }] } }));
    });
    servers.push(upstream.server);
    let signing!: () => void;
    const signingStarted = new Promise<void>((r) => (signing = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const receipts: CallReceipt[] = [];
    const agents = createAgentService({ prisma: t.db.prisma, clock: systemClock });
    const handle = createPassthrough({
      directory: { byProvider: async () => ({ provider: 'rec', url: `${upstream.url}/mcp`, endpointId: 'ep_rec' }) },
      agents,
      receipts: { record: async (r) => void receipts.push(r) },
      sealer: createSessionSealer(randomBytes(32)),
      // The gateway is still preparing the call when its caller leaves.
      assertionKey: async () => {
        signing();
        await released;
        return { kid: 'assert-1', privateKey: pair.privateKey };
      },
      issuer: 'http://plaza.test',
      clock: systemClock,
      upstreamTimeoutMs: 5_000,
    });
    let handled!: Promise<void>;
    let left!: () => void;
    const callerLeft = new Promise<void>((r) => (left = r));
    const gateway = await listen((req, res) => {
      res.on('close', () => left());
      handled = handle(req, res, 'rec');
    });
    servers.push(gateway.server);

    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: {} },
    });
    const client = httpRequest(`${gateway.url}/mcp/p/rec`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': Buffer.byteLength(body),
      },
    });
    client.on('error', () => undefined);
    client.end(body);
    await signingStarted;
    client.destroy();
    await callerLeft;
    release();
    await handled;
    expect(methods).not.toContain('tools/call');
    // Receipted as what it was: a call its caller left, not a success.
    expect(receipts).toHaveLength(1);
    expect(receipts[0]!.status).not.toBe('ok');
  });
});
