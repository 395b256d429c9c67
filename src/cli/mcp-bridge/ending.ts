/**
 * How the bridge ends. The client ends the session by closing our stdin (MCP stdio transport):
 * requests it sent before still get their answers, for at most PLAZA_MCP_CONNECT_DRAIN_MS, then
 * the gateway session is ended too (DELETE) and the process exits. A client that exits closes our
 * stdout as well; the bridge then ends at once.
 */
import type { Replies } from './replies.ts';
import { duration } from './settings.ts';
import type { BridgeState } from './state.ts';

/** The bridge's two ways to end. */
export interface Ending {
  /** Ends the gateway session, waiting at most 2 s for a gateway that is gone, and exits. */
  close(): Promise<void>;
  /** The client closed stdin: waits out the answers still due, then closes. */
  stdinEnded(): void;
}

/** The ending of the bridge whose state is `state`. */
export function createEnding(state: BridgeState, deps: { drainMs: number; reply: Replies['reply'] }): Ending {
  const { drainMs, reply } = deps;
  const close = async () => {
    if (state.closing) return;
    state.closing = true;
    const upstream = state.upstream;
    const ended = upstream.sessionId ? upstream.terminateSession().catch(() => undefined) : undefined;
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    await state.upstream.close().catch(() => undefined);
    state.stopReading();
    process.exit(0);
  };
  const stdinEnded = () => {
    const answered =
      state.unanswered.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (state.settled = resolve));
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- both only resolve; reply writes, close catches
    void Promise.race([answered, new Promise((resolve) => setTimeout(resolve, drainMs).unref())]).then(() => {
      // Every request gets an answer (JSON-RPC 2.0): one the gateway has not answered by now is
      // answered by the bridge, which then ends, rather than left without a line.
      for (const id of [...state.unanswered]) {
        if (!state.arrived.has(id))
          reply({
            jsonrpc: '2.0',
            id,
            error: {
              code: -32603,
              message: `the bridge is ending (its client closed stdin) and the gateway had not answered within ${duration(drainMs)}`,
            },
          });
      }
      return close();
    });
  };
  return { close, stdinEnded };
}
