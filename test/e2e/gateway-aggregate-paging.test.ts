/**
 * `/mcp`'s lists come in pages: a catalog of 1,205 tools is listed 500 at a time, with MCP's
 * opaque `nextCursor`, to the SDK v1 client (2025-11-25) and to the SDK v2 client pinned to
 * 2026-07-28; the cursor keeps no state, so the next page may be asked of another instance; a
 * cursor that does not decode, names another list or points past the end is refused with -32602.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CatalogTool } from '../../gateway/index.ts';
import { createTestAgent } from '../support/agents.ts';
import { type AggregateInstances, startAggregateInstances } from '../support/aggregate-instances.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { connectV2 } from '../support/mcp-v2-client.ts';

const TOOLS = 1_205;

describe("/mcp's lists in pages", () => {
  let t: TestDatabase;
  let gateway: AggregateInstances;
  let token = '';
  let base = '';

  beforeAll(async () => {
    t = await createTestDatabase('pglite');
    const created = await createTestAgent(t.db.prisma, 'pages@example.com', { display_name: 'Pager' });
    token = created.token;
    const tools: CatalogTool[] = Array.from({ length: TOOLS }, (_, i) => ({
      provider: `p${Math.floor(i / 100)}`,
      name: `tool_${String(i).padStart(4, '0')}`,
      description: `tool ${i}`,
      inputSchema: { type: 'object' },
      annotations: {},
    }));
    gateway = await startAggregateInstances(created.agents, { tools });
    base = gateway.base;
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await t?.dispose();
  });

  it('lists 1,205 tools to the SDK v1 client in pages of 500, the next page asked of another instance', async () => {
    const clients = await Promise.all(
      [0, 1].map(async (i) => {
        const client = new Client({ name: 'pager', version: '1' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${base}/i${i}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
        return client;
      }),
    );
    try {
      const names: string[] = [];
      const sizes: number[] = [];
      let cursor: string | undefined;
      let page = 0;
      do {
        // Pages alternate between the two instances: the cursor carries all there is.
        const result = await clients[page++ % 2]!.listTools(cursor === undefined ? {} : { cursor });
        sizes.push(result.tools.length);
        names.push(...result.tools.map((tool) => tool.name));
        cursor = result.nextCursor;
      } while (cursor !== undefined);
      expect(sizes).toEqual([500, 500, 205]);
      expect(new Set(names).size).toBe(TOOLS);
      expect(names[0]).toBe('p0__tool_0000');
      expect(names.at(-1)).toBe('p12__tool_1204');
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('lists them in pages to the SDK v2 client pinned to 2026-07-28 too', async () => {
    const classic = new Client({ name: 'first-page', version: '1' });
    await classic.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/i1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const client = await connectV2(`${base}/i0/mcp`, token, { name: 'pager-2026' });
    try {
      // Without a cursor the SDK v2 client walks every page itself.
      const all = await client.listTools();
      expect(new Set(all.tools.map((tool) => tool.name)).size).toBe(TOOLS);
      // With one it asks for that page alone: a cursor is the same in both revisions.
      const { nextCursor } = await classic.listTools();
      const second = await client.listTools({ cursor: nextCursor! });
      expect(second.tools).toHaveLength(500);
      expect(second.tools[0]!.name).toBe('p5__tool_0500');
      const third = await client.listTools({ cursor: second.nextCursor! });
      expect(third.tools).toHaveLength(205);
      expect(third.nextCursor).toBeUndefined();
    } finally {
      await client.close();
      await classic.close();
    }
  });

  it('refuses a cursor that does not decode, names another list or points past the end with -32602', async () => {
    const post = (params: Record<string, unknown>, method = 'tools/list') =>
      fetch(`${base}/i0/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    const errorOf = async (res: Response) => {
      const text = await res.text();
      const data = text.startsWith('event:') || text.includes('\ndata:') ? text.split('data: ')[1]! : text;
      return (JSON.parse(data) as { error?: { code: number; message: string } }).error;
    };
    const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const cursor of [
      'not a cursor',
      cursorOf({ m: 'prompts/list', o: 500 }),
      cursorOf({ m: 'tools/list', o: TOOLS + 1 }),
      cursorOf({ m: 'tools/list', o: -1 }),
      'x'.repeat(5_000),
      42,
    ]) {
      const error = await errorOf(await post({ cursor }));
      expect(error, String(cursor).slice(0, 40)).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/cursor/),
      });
    }
    // The last page's own cursor is no error: a page of nothing.
    const atEnd = await post({ cursor: cursorOf({ m: 'tools/list', o: TOOLS }) });
    expect(await atEnd.text()).toContain('"tools":[]');
  });
});
