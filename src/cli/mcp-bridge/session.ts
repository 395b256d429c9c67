/**
 * The bridge's gateway session: the transport messages go out on and answers come in from, and
 * its replacement when the gateway says (404) the session is gone, as after a provider restart.
 * The stdio client never learns of a replacement; the transport it replaced is closed once the
 * requests still in flight on it are over.
 */
import { randomBytes } from 'node:crypto';

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { GatewayRefusal } from '../mcp-bridge-refusal.ts';
import type { Replies } from './replies.ts';
import type { BridgeState, Upstream } from './state.ts';

/** A gateway session that ended (404) and could not be replaced: what the requests waiting on it are answered. */
export class RenewalFailed extends Error {
  override readonly name = 'RenewalFailed';
  constructor(why: string) {
    super(
      `the gateway session had ended (HTTP 404: the provider or Plaza restarted, or the session expired) and a new one could not be opened: ${why}. The next request tries again.`,
    );
  }
}

/** The gateway session's two ends. */
export interface GatewaySession {
  /** Has `transport` pass what the gateway sends to the client (or to the bridge's own requests). */
  wire(transport: Upstream): void;
  /** Sends to the gateway; a request the gateway refuses for a session it no longer knows goes again in a new one, once. */
  send(message: JSONRPCMessage | JSONRPCMessage[]): Promise<void>;
}

/** The gateway session over the transports `open` makes. */
export function createGatewaySession(
  state: BridgeState,
  deps: { open: () => Upstream; reply: Replies['reply'] },
): GatewaySession {
  const { open, reply } = deps;
  /** Answers to the bridge's own requests (a new session's initialize), kept from the client. */
  const own = new Map<string, (message: JSONRPCMessage) => void>();
  let renewing: Promise<void> | undefined;
  /** Requests each transport has in flight: a replaced one is closed once they are over. */
  const inFlight = new Map<Upstream, number>();
  /** Transports a new session replaced, closed once their requests in flight are over. */
  const retired = new Set<Upstream>();
  const retire = (transport: Upstream) => {
    retired.add(transport);
    if (!inFlight.get(transport)) {
      retired.delete(transport);
      void transport.close().catch(() => undefined);
    }
  };
  /**
   * Takes the protocol version an initialize answer agreed on, and has `transport` send it as
   * MCP-Protocol-Version on every later request, as the spec asks of an HTTP client (without it a
   * server assumes 2025-03-26).
   */
  const agreeOn = (transport: Upstream, answer: JSONRPCMessage) => {
    const version = 'result' in answer ? (answer.result as { protocolVersion?: unknown }).protocolVersion : undefined;
    if (typeof version !== 'string') return;
    state.negotiated = version;
    transport.setProtocolVersion(version);
  };
  const wire = (transport: Upstream) => {
    transport.onmessage = (message) => {
      const answered = !('method' in message) && 'id' in message ? message.id : undefined;
      const mine = typeof answered === 'string' ? own.get(answered) : undefined;
      if (mine) return mine(message);
      const initialize = state.initialize;
      if (answered !== undefined && initialize && 'id' in initialize && answered === initialize.id)
        agreeOn(transport, message);
      if (answered !== undefined && state.unanswered.has(answered)) state.arrived.add(answered);
      reply(message);
    };
    transport.onerror = (error) => process.stderr.write(`plaza: gateway: ${error.message}\n`);
  };
  /**
   * A new gateway session, opened with the client's own initialize: the gateway answers 404 to a
   * session it (or the provider behind it) no longer knows, as when the provider restarted, and
   * the spec has the client start a new one. The stdio client never learns of it; without this,
   * every request of its session failed until it was restarted. The new transport replaces the
   * old one only once its session is open: when it cannot be (the gateway down, a 401, a 5xx),
   * the old one stays, and the next message that gets its 404 tries again.
   */
  const renew = () =>
    (renewing ??= (async () => {
      const fresh = open();
      wire(fresh);
      const id = `plaza-bridge-${randomBytes(6).toString('hex')}`;
      const answered = new Promise<JSONRPCMessage>((resolve) => own.set(id, resolve));
      try {
        await fresh.start();
        await fresh.send({
          ...(state.initialize as { method: string; params?: Record<string, unknown> }),
          jsonrpc: '2.0',
          id,
        });
        const answer = await Promise.race([
          answered,
          new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000).unref()),
        ]);
        if (!answer) throw new Error('the gateway did not answer its initialize within 30 s');
        if ('error' in answer) throw new Error(`the gateway refused it: ${answer.error.message}`);
        agreeOn(fresh, answer);
        if (state.initialized) await fresh.send(state.initialized);
      } catch (error) {
        if (fresh.sessionId) void fresh.terminateSession().catch(() => undefined);
        void fresh.close().catch(() => undefined);
        const why = error instanceof Error ? error.message : String(error);
        process.stderr.write(
          `plaza: gateway: the session had ended, and a new one could not be opened (${why}); the next message tries again\n`,
        );
        throw new RenewalFailed(why);
      } finally {
        own.delete(id);
      }
      const stale = state.upstream;
      state.upstream = fresh;
      retire(stale);
      process.stderr.write(
        'plaza: gateway: the session had ended (the provider or Plaza restarted); a new one is open\n',
      );
    })().finally(() => (renewing = undefined)));
  /** Sends on `transport`, counting it in flight there. */
  const sendOn = async (transport: Upstream, message: JSONRPCMessage | JSONRPCMessage[]) => {
    inFlight.set(transport, (inFlight.get(transport) ?? 0) + 1);
    try {
      await transport.send(message);
    } finally {
      const left = (inFlight.get(transport) ?? 1) - 1;
      if (left > 0) inFlight.set(transport, left);
      else {
        inFlight.delete(transport);
        if (retired.has(transport)) retire(transport);
      }
    }
  };
  const send = async (message: JSONRPCMessage | JSONRPCMessage[]): Promise<void> => {
    // Not into the new session before it is initialised.
    if (renewing) await renewing.catch(() => undefined);
    const via = state.upstream;
    try {
      await sendOn(via, message);
    } catch (error) {
      if (
        !(error instanceof GatewayRefusal) ||
        error.status !== 404 ||
        state.initialize === undefined ||
        message === state.initialize ||
        state.closing
      )
        throw error;
      // Sent in a session already replaced (its 404 came after the new one opened): not again.
      if (state.upstream === via || renewing) await renew();
      await sendOn(state.upstream, message);
    }
  };
  return { wire, send };
}
