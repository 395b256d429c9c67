/**
 * A 2025 session's GET stream on `/mcp`: the SDK v1 client (2025-11-25), which opens the stream
 * itself after `initialize`, is told `notifications/tools/list_changed` when the tool list `/mcp`
 * shows changes — on the instance that sealed its session or on another one (the session is
 * sealed, each instance watches its own catalog). Refusals: no session (405), a session that does
 * not open (404), no event stream accepted (406), one stream more than an agent may hold (429);
 * and the streams end when the server stops. The catalog is a list the test changes, as a probe
 * changes the real one.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CatalogConnector, CatalogTool } from '../../gateway/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { type AggregateInstances, startAggregateInstances } from '../support/aggregate-instances.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';
import { until } from '../support/until.ts';

describe("/mcp's GET stream for a 2025 session", () => {
  let t: TestDatabase;
  let gateway: AggregateInstances;
  let token = '';
  let base = '';
  const tools: CatalogTool[] = [
    { provider: 'crm', name: 'find', description: 'find', inputSchema: { type: 'object' }, annotations: {} },
  ];
  let instances: AggregateInstances['instances'] = [];
  /** The online connectors the catalog knows (none to start with). */
  const connectors: CatalogConnector[] = [];

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const created = await createTestAgent(t.db.prisma, 'stream@example.com', {
      display_name: 'Listener',
      owner_context: 'acme',
    });
    token = created.token;
    gateway = await startAggregateInstances(
      created.agents,
      { tools, connectors },
      { listChangesEveryMs: 100, notificationStreams: { maxPerAgent: 3 } },
    );
    ({ base, instances } = gateway);
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await t?.dispose();
  });

  const auth = () => ({ authorization: `Bearer ${token}` });

  /** An SDK v1 client connected to instance `i`; `changes` counts the list changes it was told. */
  async function listener(
    i: number,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport; changes: () => number }> {
    let changes = 0;
    const client = new Client({ name: 'classic-listener', version: '1' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/i${i}/mcp`), {
      requestInit: { headers: auth() },
    });
    await client.connect(transport);
    return { client, transport, changes: () => changes };
  }

  /** Opens a raw GET stream in the session `sessionId`; resolves with its response (its body left open). */
  const get = (at: string, headers: Record<string, string>) => fetch(at, { headers: { ...auth(), ...headers } });

  it('advertises tools.listChanged and tells the client when the tool list changes, on either instance', async () => {
    const a = await listener(0);
    try {
      expect(a.client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect(a.transport.sessionId).toBeTruthy();
      // The SDK client opened its GET stream after initialize: wait until the stream is up.
      await until('the GET stream', () => instanceStreams(0) === 1);
      tools.push({
        provider: 'crm',
        name: 'added',
        description: 'new',
        inputSchema: { type: 'object' },
        annotations: {},
      });
      await until('the list change', () => a.changes() === 1);
      expect((await a.client.listTools()).tools.map((tool) => tool.name)).toContain('crm__added');

      // The session sealed by instance 0 opens on instance 1; that instance's own watch tells it.
      const other = await get(`${base}/i1/mcp`, {
        accept: 'text/event-stream',
        'mcp-session-id': a.transport.sessionId!,
        'mcp-protocol-version': '2025-11-25',
      });
      expect(other.status).toBe(200);
      expect(other.headers.get('content-type')).toBe('text/event-stream');
      const reader = other.body!.getReader();
      // The stream's first bytes: what instance 1 noticed once its watch had a list to compare.
      await until('instance 1 watching', () => instanceStreams(1) === 1);
      await new Promise((r) => setTimeout(r, 300));
      tools.pop();
      let text = '';
      while (!text.includes('notifications/tools/list_changed')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text).toContain('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}');
      await reader.cancel();
      await until('the change on instance 0 too', () => a.changes() === 2);
    } finally {
      await a.client.close();
    }
    await until('the streams closed', () => instanceStreams(0) === 0 && instanceStreams(1) === 0);
  });

  it('tells a 2025 and a 2026-07-28 client when a connector declaring resources and prompts comes and goes', async () => {
    const a = await listener(0);
    let resources = 0;
    let prompts = 0;
    a.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void resources++);
    a.client.setNotificationHandler(PromptListChangedNotificationSchema, () => void prompts++);
    const modern = await connectV2(`${base}/i1/mcp`, token, { name: 'modern-listener' });
    const told: string[] = [];
    modern.setNotificationHandler('notifications/resources/list_changed', () => void told.push('resources'));
    modern.setNotificationHandler('notifications/prompts/list_changed', () => void told.push('prompts'));
    try {
      expect(a.client.getServerCapabilities()).toMatchObject({
        resources: { listChanged: true },
        prompts: { listChanged: true },
      });
      const subscription = await modern.listen({ resourcesListChanged: true, promptsListChanged: true });
      expect(subscription.honoredFilter).toMatchObject({ resourcesListChanged: true, promptsListChanged: true });
      await until('the GET stream', () => instanceStreams(0) === 1);
      // Both watches have read the lists once before the change.
      await new Promise((r) => setTimeout(r, 300));
      connectors.push({
        provider: 'docs',
        url: 'http://127.0.0.1:9/mcp',
        endpointId: 'ep_docs',
        capabilities: { resources: {}, prompts: {} },
      });
      await until('the 2025 client told', () => resources === 1 && prompts === 1);
      await until('the 2026-07-28 client told', () => told.length === 2);
      expect(told.sort()).toEqual(['prompts', 'resources']);
      expect(a.changes()).toBe(0);
      // A connector that declares prompts only changes the prompts alone.
      connectors.push({
        provider: 'notes',
        url: 'http://127.0.0.1:9/n',
        endpointId: 'ep_notes',
        capabilities: { prompts: {} },
      });
      await until('the prompts change', () => prompts === 2);
      expect(resources).toBe(1);
      connectors.length = 0;
      await until('both gone', () => resources === 2 && prompts === 3);
      await subscription.close();
    } finally {
      await modern.close();
      await a.client.close();
    }
  });

  it('refuses a GET without a session (405), in a session that does not open (404), or without an event stream (406)', async () => {
    const bare = await get(`${base}/i0/mcp`, { accept: 'text/event-stream' });
    expect(bare.status).toBe(405);
    expect(await bare.json()).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/Mcp-Session-Id/) },
    });

    const forged = await get(`${base}/i0/mcp`, {
      accept: 'text/event-stream',
      'mcp-session-id': 'not-a-sealed-session',
    });
    expect(forged.status).toBe(404);

    const a = await listener(0);
    try {
      const plain = await get(`${base}/i0/mcp`, {
        accept: 'application/json',
        'mcp-session-id': a.transport.sessionId!,
      });
      expect(plain.status).toBe(406);
      expect(await plain.json()).toMatchObject({
        error: { code: -32000, message: expect.stringMatching(/text\/event-stream/) },
      });
    } finally {
      await a.client.close();
    }
  });

  it('holds at most maxPerAgent streams of an agent (429 with Retry-After), and ends them when the server stops', async () => {
    const a = await listener(0);
    const opened: Response[] = [];
    try {
      await until('the client’s stream', () => instanceStreams(0) === 1);
      for (let i = 0; i < 2; i++)
        opened.push(
          await get(`${base}/i0/mcp`, { accept: 'text/event-stream', 'mcp-session-id': a.transport.sessionId! }),
        );
      expect(opened.map((r) => r.status)).toEqual([200, 200]);
      const over = await get(`${base}/i0/mcp`, {
        accept: 'text/event-stream',
        'mcp-session-id': a.transport.sessionId!,
      });
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toBe('5');
      expect(await over.json()).toMatchObject({
        error: { code: -32000, message: expect.stringMatching(/3 notification streams/) },
      });

      instances[0]!.endStreams();
      for (const response of opened) {
        const reader = response.body!.getReader();
        // Ended by the server: the body ends (after at most what was written before).
        for (;;) if ((await reader.read()).done) break;
      }
      expect(instanceStreams(0)).toBe(0);
    } finally {
      await a.client.close();
    }
  });

  /** Streams open on instance `i` (its aggregate's count). */
  function instanceStreams(i: number): number {
    return instances[i]!.notificationStreamCount();
  }
});
