/**
 * What the bridge does with each line its client writes: a message goes to the gateway (held while
 * the client's initialize is unanswered, so it reaches the new session in order), a batch goes as
 * one when the session speaks the one MCP version with batches and is refused otherwise, and a
 * request whose send fails is answered with the reason rather than left to the client's timeout.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import {
  type BridgeAnswer,
  bridgeError,
  type ClientMessage,
  INVALID_REQUEST,
  readClientLine,
} from '../mcp-bridge-input.ts';
import { GatewayRefusal } from '../mcp-bridge-refusal.ts';
import type { Replies } from './replies.ts';
import { type GatewaySession, RenewalFailed } from './session.ts';
import type { BatchReply, BridgeState, Handshake } from './state.ts';

/** The one MCP protocol version with JSON-RPC batches (added in 2025-03-26, removed in 2025-06-18). */
const BATCH_VERSION = '2025-03-26';
/** Longest line the bridge reads from its client (the SDK's stdio transport allowed as much). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** The bridge's reading of its client's lines. */
export interface ClientInput {
  onLine(line: string): void;
  /** A line longer than MAX_LINE_BYTES: refused, and answered as an invalid request. */
  onOversize(): void;
}

/** Reads the client's lines into `session`, answering through `replies`. */
export function createClientInput(
  state: BridgeState,
  deps: { replies: Replies; send: GatewaySession['send']; write: (message: unknown) => Promise<void> },
): ClientInput {
  const { replies, send, write } = deps;
  const { reply, refuse, dropped } = replies;
  /** Answers each of `ids` with the error a failed send gives. */
  const failed = (ids: Array<string | number>) => (error: unknown) => {
    if (error instanceof RenewalFailed) {
      for (const id of ids) reply({ jsonrpc: '2.0', id, error: { code: -32603, message: error.message } });
      return;
    }
    // Already on stderr: the transport reports every failed send to onerror too.
    if (error instanceof GatewayRefusal) {
      // The gateway's own answer, under the request's id; the bridge's words only when it gave none.
      const answer = () => {
        for (const id of ids) reply(error.answerFor(id));
      };
      // A refused handshake ends the client's session, and with it often this process: what the
      // provider check found (a credential it needs, say) is said first, within 2 s.
      const initialize = state.initialize;
      const handshakeId = initialize !== undefined && 'id' in initialize ? initialize.id : undefined;
      if (handshakeId !== undefined && ids.includes(handshakeId)) {
        Promise.race([state.providerChecked, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]).then(
          answer,
          answer,
        );
      } else answer();
      return;
    }
    const reason = `gateway request failed: ${(error as Error).message}`;
    // The client is told at once rather than left to its own timeout.
    for (const id of ids) reply({ jsonrpc: '2.0', id, error: { code: -32603, message: reason } });
  };
  const onMessage = (message: JSONRPCMessage) => {
    const requestId = 'method' in message && 'id' in message ? message.id : undefined;
    if (requestId !== undefined) state.unanswered.add(requestId);
    if ('method' in message && message.method === 'initialize') state.initialize = message;
    if ('method' in message && message.method === 'notifications/initialized') state.initialized = message;
    const forward = () => send(message).catch(failed(requestId === undefined ? [] : [requestId]));
    // Callbacks of one promise run in the order they were added: the held messages go in order.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- answered only resolves; forward catches (failed answers the client)
    if (state.handshake) void state.handshake.answered.then(forward);
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- as above
    else void forward();
    if ('method' in message && message.method === 'initialize' && requestId !== undefined) {
      let release = () => {};
      const answered = new Promise<void>((resolve) => (release = resolve));
      const opened: Handshake = {
        id: requestId,
        answered,
        over: () => {
          if (state.handshake === opened) state.handshake = undefined;
          release();
        },
      };
      state.handshake = opened;
    }
  };
  /**
   * A batch of the client's: passed on as one when the session speaks 2025-03-26, the one MCP
   * version with batches (2025-06-18 removed them); otherwise each request in it is refused.
   */
  const onBatch = (items: ClientMessage[]) => {
    const answers: BridgeAnswer[] = [];
    const messages: JSONRPCMessage[] = [];
    for (const item of items) {
      if (item.kind === 'refused') {
        process.stderr.write(`plaza: not passed on to the gateway (in a batch): ${item.why}\n`);
        if (item.answer) answers.push(item.answer);
      } else {
        dropped(item.dropped);
        messages.push(item.message);
      }
    }
    const requestIds = messages.flatMap((m) => ('method' in m && 'id' in m ? [m.id] : []));
    const why =
      state.negotiated !== BATCH_VERSION
        ? `JSON-RPC batches are not part of MCP ${state.negotiated ?? 'before initialize is answered'} (only 2025-03-26 has them): send each message on a line of its own`
        : new Set(requestIds).size < requestIds.length || requestIds.some((id) => state.unanswered.has(id))
          ? 'Request ids must be unique within a batch and among requests not yet answered.'
          : undefined;
    if (why !== undefined) {
      process.stderr.write(`plaza: not passed on to the gateway: a batch (${why})\n`);
      for (const id of requestIds) answers.push(bridgeError(id, INVALID_REQUEST, `Invalid Request: ${why}`));
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
      if (answers.length > 0) void write(answers);
      return;
    }
    if (messages.length === 0) {
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
      if (answers.length > 0) void write(answers);
      return;
    }
    // 2025-03-26 keeps initialize out of batches; an initialized notification may be in one.
    for (const m of messages) if ('method' in m && m.method === 'notifications/initialized') state.initialized = m;
    if (requestIds.length > 0) {
      const batch: BatchReply = { ids: requestIds, waiting: requestIds.length, answers };
      for (const id of requestIds) {
        state.unanswered.add(id);
        state.batches.set(id, batch);
      }
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
    } else if (answers.length > 0) void write(answers);
    void send(messages).catch(failed(requestIds));
  };
  const onLine = (line: string) => {
    const read = readClientLine(line);
    if (read === undefined) return;
    if (read.kind === 'refused') return refuse(read);
    if (read.kind === 'message') {
      dropped(read.dropped);
      return onMessage(read.message);
    }
    // Decided once the initialize is answered, when the version is known.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- answered only resolves; onBatch's sends are caught (failed answers the client)
    if (state.handshake) void state.handshake.answered.then(() => onBatch(read.items));
    else onBatch(read.items);
  };
  const onOversize = () =>
    refuse({
      kind: 'refused',
      why: `a line longer than ${MAX_LINE_BYTES} bytes`,
      answer: bridgeError(null, INVALID_REQUEST, `Invalid Request: a message longer than ${MAX_LINE_BYTES} bytes`),
    });
  return { onLine, onOversize };
}
