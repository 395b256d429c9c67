/**
 * The marketplace's background work in a real `plaza serve`: the discovery loop pulls a local
 * registry, the probe loop probes what it found (a real server-everything), its tools go online
 * without anyone calling the prober by hand, and SIGTERM stops the loops and exits 0.
 */
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';

describe('plaza serve with background probing and discovery', () => {
  let everything: EverythingServer;
  let registry: Server;
  let plaza: ServerProcess;

  beforeAll(async () => {
    everything = await startEverything();
    registry = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          servers: [
            {
              server: {
                name: 'io.github.modelcontextprotocol/everything',
                description: 'The reference server',
                remotes: [{ type: 'streamable-http', url: everything.url }],
              },
              _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true } },
            },
          ],
          metadata: {},
        }),
      );
    });
    registry.listen(0, '127.0.0.1');
    await once(registry, 'listening');
    plaza = await startPlazaServer({
      PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-bg-')),
      MCP_REGISTRY_URL: `http://127.0.0.1:${(registry.address() as AddressInfo).port}`,
      PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      PLAZA_PROBE_BASE_INTERVAL_S: '30',
    });
  });
  afterAll(async () => {
    plaza?.child.kill('SIGKILL');
    await everything?.stop();
    registry?.close();
  });

  it('discovers, probes and lists the tools on its own', async () => {
    let tools: any[] = [];
    for (let i = 0; i < 100 && tools.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      tools = ((await (await fetch(`${plaza.url}/api/mcp/tools?q=echo`)).json()) as any).tools;
    }
    expect(tools[0]).toMatchObject({
      tool: 'echo',
      provider: 'io-github-modelcontextprotocol-everything',
      health: 'healthy',
    });
    const endpoints = ((await (await fetch(`${plaza.url}/api/mcp/endpoints`)).json()) as any).endpoints;
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0]).toMatchObject({
      source: 'discovered',
      registry_name: 'io.github.modelcontextprotocol/everything',
      status: 'healthy',
    });
    expect(plaza.output()).toContain('PLAZA_ALLOW_PRIVATE_TARGETS is on');
  });

  it('stops its loops and exits 0 on SIGTERM', async () => {
    plaza.child.kill('SIGTERM');
    expect(await plaza.exited).toBe(0);
  });
});
