/**
 * What the chat benchmark runs beside Plaza and direct (issue 36): the in-house references
 * (bench/fixtures/bare-chat-proxy.mjs, essential-chat-proxy.mjs) and the peer a user would pick
 * instead, `@portkey-ai/gateway` 1.15.2, run as its `start-server.js` (headless) with the
 * `openai` provider and a custom host pointing at the local upstream, its install scripts off
 * (bench/fixtures/portkey-preload.mjs says what that needs). BENCH_REFERENCE=0 leaves the
 * references out, BENCH_CHAT_PEERS='' the peer.
 */
import { freePort, spawnPeer, spawnReady } from './lib.ts';

/** A proxy measured beside Plaza: where to send completions, with which headers, and its process. */
export interface ChatOther {
  /** `reference_<label>` or `peer_<name>`: the prefix of its figures in the result. */
  key: string;
  url: string;
  token: string | undefined;
  headers: Record<string, string>;
  pid: number;
  stop(): Promise<void>;
}

export const CHAT_PEERS = (process.env['BENCH_CHAT_PEERS'] ?? 'portkey').split(',').filter(Boolean);

/** What each peer does and does not do per completion. */
export const CHAT_PEER_NOTES: Record<string, { version: string; does: string; doesNot: string }> = {
  portkey: {
    version: '@portkey-ai/gateway 1.15.2 (Node build, `openai` provider, custom host)',
    does: 'reads the body, maps it for the provider, fetches the upstream with retry and hooks machinery, re-reads the stream chunk by chunk through a TransformStream, adds its trace headers',
    doesNot:
      'no caller authentication (the caller’s bearer goes upstream as the provider key), no rate limits or token budgets, no usage rows (no logging backend configured)',
  },
};

/** Starts the references and peers against the upstream on `upstreamPort`. */
export async function startChatOthers(upstreamPort: number, withReferences: boolean): Promise<ChatOther[]> {
  const others: ChatOther[] = [];
  try {
    if (withReferences)
      for (const [label, fixture] of [
        ['bare', 'bare-chat-proxy.mjs'],
        ['essentials', 'essential-chat-proxy.mjs'],
      ] as const) {
        const child = await spawnReady<{ port: number; token?: string }>(
          process.execPath,
          [`bench/fixtures/${fixture}`],
          { UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`, TOKEN: 'bench-reference', PORT: '0' },
        );
        others.push({
          key: `reference_${label}`,
          url: `http://127.0.0.1:${child.info.port}/v1/chat/completions`,
          token: child.info.token ?? 'bench-reference',
          headers: {},
          pid: child.child.pid!,
          stop: () => child.stop(),
        });
      }
    for (const peer of CHAT_PEERS) {
      if (peer !== 'portkey') throw new Error(`unknown chat peer ${peer}; known: portkey`);
      const port = await freePort();
      const child = await spawnPeer(
        process.execPath,
        [
          '--import',
          './bench/fixtures/portkey-preload.mjs',
          'node_modules/@portkey-ai/gateway/build/start-server.js',
          `--port=${port}`,
          '--headless',
        ],
        {},
        /Ready for connections/,
      );
      others.push({
        key: 'peer_portkey',
        url: `http://127.0.0.1:${port}/v1/chat/completions`,
        // Portkey passes the caller's bearer on as the provider's key.
        token: 'sk-bench',
        headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `http://127.0.0.1:${upstreamPort}/v1` },
        pid: child.child.pid!,
        stop: () => child.stop(),
      });
    }
    return others;
  } catch (error) {
    for (const o of others) await o.stop();
    throw error;
  }
}
