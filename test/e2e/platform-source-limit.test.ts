/**
 * Pins the source registration limit on Plaza's own MCP tool (issue 31, item 5): `agpk.source.register`
 * on `/mcp/p/platform` (and `platform__agpk.source.register` on `/mcp`), called with the real MCP
 * SDK client, counts in the same per-account budget as `POST /api/agpk/sources/tool`
 * (PLAZA_RATE_LIMIT_SOURCES_PER_MIN): alternating between the two does not double it, and past it
 * the tool answers in-band (`isError`, naming the limit) and registers nothing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const source = (n: number) => ({
  package_id: `com.example.limited${n}`,
  name: `Limited ${n}`,
  version: '1.0.0',
  summary: 'Registered to count.',
  vendor_name: 'Example Inc',
  download_uri: `https://downloads.example.com/limited-${n}.agpk`,
  sha256: String(n % 10).repeat(64),
});

describe.each(BACKENDS)('source registration limit of the platform MCP tool on %s', (backend) => {
  let plaza: TestPlaza;
  let apiKey: string;
  let agentToken: string;

  beforeAll(async () => {
    // Behind a trusted proxy each HTTP registration below comes from another address: only the
    // account's budget can stop them.
    plaza = await startTestPlaza(backend, {
      env: { PLAZA_RATE_LIMIT_SOURCES_PER_MIN: '4', PLAZA_TRUST_PROXY: 'loopback', PLAZA_BACKGROUND: '0' },
    });
    apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'publisher@example.com',
      })
    ).apiKey;
    const agent = await fetch(`${plaza.url}/api/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ display_name: 'Publisher agent' }),
    });
    expect(agent.status).toBe(201);
    agentToken = ((await agent.json()) as any).data.token;
  });
  afterAll(async () => {
    await plaza?.close();
  });

  async function connect(path: string): Promise<Client> {
    const client = new Client({ name: 'limit-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
      }),
    );
    return client;
  }
  const viaHttp = (n: number) =>
    fetch(`${plaza.url}/api/agpk/sources/tool`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${apiKey}`,
        'x-forwarded-for': `198.51.100.${n}`,
      },
      body: JSON.stringify(source(n)),
    });

  it('shares one budget with POST /api/agpk/sources/tool and answers past it in-band, naming the limit', async () => {
    const platform = await connect('/mcp/p/platform');
    const aggregate = await connect('/mcp');
    try {
      const viaTool = async (client: Client, name: string, n: number) =>
        (await client.callTool({ name, arguments: source(n) })) as any;
      expect((await viaTool(platform, 'agpk.source.register', 1)).isError).toBeFalsy();
      expect((await viaHttp(2)).status).toBe(202);
      expect((await viaTool(aggregate, 'platform__agpk.source.register', 3)).isError).toBeFalsy();
      expect((await viaHttp(4)).status).toBe(202);

      const refused = await viaTool(platform, 'agpk.source.register', 5);
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toMatch(
        /^Too many source registrations for this account: at most 4 per 60 s \(the "sources" limit, shared with POST \/api\/agpk\/sources\/tool\); retry after \d+ s\.$/,
      );
      expect((await viaTool(aggregate, 'platform__agpk.source.register', 6)).isError).toBe(true);
      const http = await viaHttp(7);
      expect(http.status).toBe(429);
      expect(http.headers.get('retry-after')).toMatch(/^\d+$/);

      const stored = await plaza.db.prisma.packageSource.findMany({ select: { packageId: true } });
      expect(stored.map((s) => s.packageId).sort()).toEqual([
        'com.example.limited1',
        'com.example.limited2',
        'com.example.limited3',
        'com.example.limited4',
      ]);
    } finally {
      await Promise.all([platform.close(), aggregate.close()]);
    }
  });
});
