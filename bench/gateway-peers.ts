/**
 * The MCP proxies from npm that a user would pick instead of Plaza's gateway (issue 36), started
 * by the gateway benchmark in front of the same local upstream: `mcp-hub` (its `/mcp` serves the
 * older HTTP+SSE transport only, tools namespaced `<server>__<tool>`), `mcp-proxy` (its library
 * API fronting a streamable-HTTP upstream, bench/fixtures/peer-mcp-proxy.mjs) and Civic's
 * passthrough MCP server. Each runs as its own process with its install scripts off, offline (no
 * peer needs the network to serve: mcp-hub's marketplace download fails and it goes on without).
 * BENCH_PEERS picks some (default: all three).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Agent } from 'undici';

import { freePort, spawnPeer, spawnReady } from './lib.ts';
import { openSseSession, type SseSession } from './mcp-sse-session.ts';

export const GATEWAY_PEERS = (process.env['BENCH_PEERS'] ?? 'mcp-hub,mcp-proxy,civic-passthrough')
  .split(',')
  .filter(Boolean);

/** What each peer does and does not do per call, for the result file and the summary's table. */
export const GATEWAY_PEER_NOTES: Record<string, { version: string; does: string; doesNot: string }> = {
  'mcp-hub': {
    version: 'mcp-hub 4.2.1',
    does: 'routes `<server>__<tool>` to the server that lists it over one upstream client, answers on the caller’s SSE stream (HTTP+SSE transport: POST /messages, answer as an event)',
    doesNot:
      'no caller authentication, no identity or assertion to the upstream, no receipt, no streamable-HTTP endpoint for callers',
  },
  'mcp-proxy': {
    version: 'mcp-proxy 6.7.19 (library API, streamable-HTTP client upstream)',
    does: 'one SDK v2 `Server` per caller session relaying each request through one shared upstream client; answers as SSE events kept in a per-session event store for resumption',
    doesNot:
      'no caller authentication (its optional X-API-Key is off), no identity or assertion, no receipt; the upstream sees one client for every caller',
  },
  'civic-passthrough': {
    version: '@civic/passthrough-mcp-server 0.12.1',
    does: 'one upstream session per caller session, each message through its (empty) hook chain, `_meta` stamped with the session id and time, answers as SSE',
    doesNot:
      'no caller authentication, no identity or assertion, no receipt (hooks would add them, at a remote call each)',
  },
};

/** A running peer in front of one upstream: how to call its echo tool, and its process. */
export interface GatewayPeer {
  key: string;
  pid: number;
  /** Prepares `connections` callers (sessions) and returns the call for worker `w`. */
  callers(connections: number): Promise<(worker: number, message: string) => Promise<string>>;
  stop(): Promise<void>;
}

const PROTOCOL_VERSION = '2025-06-18';

/** Starts `name` in front of `upstreamUrl` (the upstream is called `provider` where a peer names it). */
export async function startGatewayPeer(
  name: string,
  provider: string,
  upstreamUrl: string,
  dir: string,
  streamable: (url: string) => Promise<(worker: number, message: string) => Promise<string>>,
): Promise<GatewayPeer> {
  if (name === 'mcp-hub') return startMcpHub(provider, upstreamUrl, dir);
  if (name === 'mcp-proxy') {
    const child = await spawnReady<{ port: number }>(process.execPath, ['bench/fixtures/peer-mcp-proxy.mjs'], {
      UPSTREAM_URL: upstreamUrl,
    });
    const url = `http://127.0.0.1:${child.info.port}/mcp`;
    return { key: name, pid: child.child.pid!, callers: () => streamable(url), stop: () => child.stop() };
  }
  if (name === 'civic-passthrough') {
    const port = await freePort();
    const target = new URL(upstreamUrl);
    const child = await spawnPeer(
      process.execPath,
      ['node_modules/@civic/passthrough-mcp-server/dist/cli.js'],
      { PORT: String(port), TARGET_SERVER_URL: target.origin, TARGET_SERVER_MCP_PATH: target.pathname },
      /Passthrough MCP Server running/,
    );
    const url = `http://127.0.0.1:${port}/mcp`;
    return { key: name, pid: child.child.pid!, callers: () => streamable(url), stop: () => child.stop() };
  }
  throw new Error(`unknown gateway peer ${name}; known: ${Object.keys(GATEWAY_PEER_NOTES).join(', ')}`);
}

async function startMcpHub(provider: string, upstreamUrl: string, dir: string): Promise<GatewayPeer> {
  const home = join(dir, `mcp-hub-${provider}`);
  mkdirSync(home, { recursive: true });
  const config = join(home, 'servers.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { [provider]: { url: upstreamUrl } } }));
  const port = await freePort();
  // Its state, logs and caches go to a folder of its own; its marketplace download fails offline.
  const child = await spawnPeer(
    process.execPath,
    ['node_modules/mcp-hub/dist/cli.js', '--port', String(port), '--config', config],
    {
      HOME: home,
      XDG_STATE_HOME: join(home, 'state'),
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
    },
    /1\/1 servers started successfully/,
  );
  const dispatcher = new Agent({ connections: 128, keepAliveTimeout: 60_000, pipelining: 1 });
  const sessions: SseSession[] = [];
  const tool = `${provider}__echo`;
  return {
    key: 'mcp-hub',
    pid: child.child.pid!,
    async callers(connections) {
      while (sessions.length < connections)
        sessions.push(await openSseSession(`http://127.0.0.1:${port}/mcp`, dispatcher, PROTOCOL_VERSION));
      return async (worker, message) => {
        const answer = await sessions[worker % connections]!.call('tools/call', { name: tool, arguments: { message } });
        return JSON.stringify(answer);
      };
    },
    async stop() {
      for (const s of sessions) s.close();
      await child.stop();
      await dispatcher.close();
    },
  };
}
