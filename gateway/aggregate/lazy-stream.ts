/**
 * The fast path's answer when the provider speaks before it answers: a plain 2025 tools/call is
 * answered as JSON, but once a log message or progress notification comes first, the answer
 * becomes an event stream (the transport lets a server answer a POST either way) carrying those
 * notifications and then the result; so does a request Plaza asks the client during the call (a
 * client in a session, see client-session). A call without either stays one JSON body.
 */
import type { ServerResponse } from 'node:http';

import type { ClientRequest } from '../bridge/input-waiters.ts';
import { guardDrain } from '../internal/answer-writer.ts';
import type { AgentNotification } from './relay.ts';

/** One server-sent event carrying a JSON-RPC message's text. */
const event = (text: string) => `event: message\ndata: ${text}\n\n`;

/** A response that turns into an event stream at its first notification. */
export interface LazyStream {
  /** Whether the stream was opened (the answer must then go on it). */
  readonly open: boolean;
  /** Sends a notification, opening the stream first. */
  notify(n: AgentNotification): Promise<void>;
  /** Sends the client a request (a provider's, see client-asks), opening the stream first; false when it is gone. */
  request(message: ClientRequest): boolean;
  /** Ends the opened stream with the answer's JSON text. */
  end(text: string): void;
}

/** The lazy event stream of `res`; a client that reads nothing of it is cut after `writeTimeoutMs`. */
export function lazyStream(res: ServerResponse, writeTimeoutMs: number): LazyStream {
  let open = false;
  const start = () => {
    if (open) return;
    open = true;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    guardDrain(res, writeTimeoutMs);
  };
  return {
    get open() {
      return open;
    },
    async notify(n) {
      if (res.destroyed || res.writableEnded) return;
      start();
      res.write(event(JSON.stringify({ jsonrpc: '2.0', ...n })));
    },
    request(message) {
      if (res.destroyed || res.writableEnded) return false;
      start();
      res.write(event(JSON.stringify(message)));
      return true;
    },
    end(text) {
      if (!res.destroyed && !res.writableEnded) res.end(event(text));
    },
  };
}
