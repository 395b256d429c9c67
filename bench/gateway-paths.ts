/**
 * The paths the gateway benchmark drives (bench/gateway.ts): a target over the bench's own
 * streamable-HTTP client, or a peer's own callers; and the mean of several runs of one.
 */
import { callEcho, nextSequence, type Target } from './gateway-client.ts';
import type { GatewayPeer } from './gateway-peers.ts';
import { loadLoop, type LoopResult } from './lib.ts';

/** One way of calling echo under load: `prepare(c)` readies c callers (a peer's sessions) and gives the call of worker w. */
export interface Path {
  key: string;
  pid: number;
  counter: { calls: number };
  prepare(connections: number): Promise<(worker: number) => Promise<boolean>>;
}

/** A path over the bench's own streamable-HTTP client (direct, Plaza, the references, peers that speak it). */
export function targetPath(key: string, target: Target, counter: { calls: number }, pid: number): Path {
  const call = () => callEcho(target, counter);
  return { key, pid, counter, prepare: async () => call };
}

/** A peer's path: its callers answer with the JSON-RPC text of the echo call. */
export function peerPath(peer: GatewayPeer): Path {
  const counter = { calls: 0 };
  return {
    key: `peer_${peer.key}`,
    pid: peer.pid,
    counter,
    async prepare(connections) {
      const send = await peer.callers(connections);
      return async (worker) => {
        const n = nextSequence();
        counter.calls++;
        const text = await send(worker, `m${n}`);
        return text.includes(`Echo: m${n}`) && !text.includes('"isError":true');
      };
    },
  };
}

export async function runPath(path: Path, connections: number, durationS: number): Promise<LoopResult> {
  const send = await path.prepare(connections);
  return loadLoop({ connections, durationS, send });
}

/** The mean of several runs' figures (their requests and errors summed). */
export function summarise(runs: LoopResult[]): LoopResult {
  const n = runs.length;
  return {
    requests: runs.reduce((a, r) => a + r.requests, 0),
    requestsPerSec: runs.reduce((a, r) => a + r.requestsPerSec, 0) / n,
    p50Ms: runs.reduce((a, r) => a + r.p50Ms, 0) / n,
    p99Ms: runs.reduce((a, r) => a + r.p99Ms, 0) / n,
    errors: runs.reduce((a, r) => a + r.errors, 0),
    non2xx: 0,
  };
}
