/**
 * `/mcp` on two instances of one deployment, in process, with no provider behind it: each
 * instance a `createAggregate` over the same catalog (lists the test changes as a probe would
 * change the real one) and the same session-sealing key, served at `<base>/i0/mcp` and
 * `<base>/i1/mcp`. For tests of what `/mcp` answers itself: lists, pages, list changes, streams.
 */
import { randomBytes } from 'node:crypto';

import { generateKeyPair } from 'jose';

import {
  type AggregateOptions,
  type CatalogConnector,
  type CatalogTool,
  createAggregate,
  createSessionSealer,
  createUpstreamPool,
} from '../../gateway/index.ts';
import type { AgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { listen } from './listen.ts';

export interface AggregateInstances {
  /** `http://127.0.0.1:<port>`: the instances are at `${base}/i0/mcp` and `${base}/i1/mcp`. */
  base: string;
  instances: ReturnType<typeof createAggregate>[];
  close(): Promise<void>;
}

/** Starts two instances of `/mcp` over `tools` and `connectors` (read live), with `extra` options. */
export async function startAggregateInstances(
  agents: AgentService,
  catalog: { tools: CatalogTool[]; connectors?: CatalogConnector[] },
  extra: Partial<AggregateOptions> = {},
): Promise<AggregateInstances> {
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  // One sealing key for both instances, as every instance of a deployment has.
  const sealer = createSessionSealer(randomBytes(32));
  const options: AggregateOptions = {
    agents,
    receipts: { record: async () => undefined },
    assertionKey: async () => ({ kid: 'assert-1', privateKey: pair.privateKey }),
    issuer: 'http://plaza.test',
    clock: systemClock,
    catalog: {
      onlineTools: async () => catalog.tools,
      byProvider: async () => undefined,
      needsCredential: async () => false,
      onlineConnectors: async () => [...(catalog.connectors ?? [])],
    },
    pool: createUpstreamPool({ timeoutMs: 5_000 }),
    sealer: async () => sealer,
    ...extra,
  };
  const instances = [createAggregate(options), createAggregate(options)];
  const { server, url } = await listen((req, res) => {
    const instance = /^\/i(\d)\/mcp$/.exec(req.url ?? '')?.[1];
    void instances[Number(instance ?? 0)]!(req, res);
  });
  return {
    base: url,
    instances,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
