/**
 * What the bridge writes to its client: the gateway's answers (a batch's gathered into one array),
 * the bridge's own answers, and the lines on stderr about what it did not pass on or passed on
 * changed. Writing an answer is what marks its request answered.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import type { BridgeAnswer, ClientMessage } from '../mcp-bridge-input.ts';
import type { BridgeState } from './state.ts';

/** Writes to the client. */
export interface Replies {
  /**
   * Writes a message to the client. An answer to a request of a batch waits for the others: the
   * batch is answered as one array (JSON-RPC 2.0 §6).
   */
  reply(message: JSONRPCMessage | BridgeAnswer): void;
  /** Says on stderr what the bridge did not pass on, and answers it when JSON-RPC says so. */
  refuse(item: Extract<ClientMessage, { kind: 'refused' }>): void;
  /** Names on stderr (once each) the members left off a message passed on. */
  dropped(names: string[]): void;
}

/** The client's replies over `write` (one JSON line a message). */
export function createReplies(state: BridgeState, write: (message: unknown) => Promise<void>): Replies {
  const answer = (id: string | number) => {
    state.arrived.delete(id);
    if (state.unanswered.delete(id) && state.unanswered.size === 0) state.settled?.();
    if (state.handshake?.id === id) state.handshake.over();
  };
  const reply = (message: JSONRPCMessage | BridgeAnswer) => {
    const id =
      !('method' in message) && 'id' in message && (typeof message.id === 'string' || typeof message.id === 'number')
        ? message.id
        : undefined;
    const batch = id === undefined ? undefined : state.batches.get(id);
    if (batch && id !== undefined) {
      state.batches.delete(id);
      batch.answers.push(message);
      if (--batch.waiting > 0) return;
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
      void write(batch.answers).then(() => batch.ids.forEach(answer));
      return;
    }
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
    void write(message).then(() => {
      if (id !== undefined) answer(id);
    });
  };
  const refuse = (item: Extract<ClientMessage, { kind: 'refused' }>) => {
    process.stderr.write(`plaza: not passed on to the gateway: ${item.why}\n`);
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
    if (item.answer) void write(item.answer);
  };
  /** Members already named on stderr as left off (once each). */
  const droppedNamed = new Set<string>();
  const dropped = (names: string[]) => {
    const fresh = names.filter((name) => !droppedNamed.has(name));
    if (fresh.length === 0) return;
    for (const name of fresh) droppedNamed.add(name);
    process.stderr.write(
      `plaza: passed on without the member(s) JSON-RPC 2.0 does not name: ${fresh.map((name) => JSON.stringify(name)).join(', ')}\n`,
    );
  };
  return { reply, refuse, dropped };
}
