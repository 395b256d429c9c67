/**
 * The fast path's answer when the provider speaks before it answers: a plain 2025 tools/call is
 * answered as JSON, but once a log message or progress notification comes first, the answer
 * becomes an event stream (the transport lets a server answer a POST either way) carrying those
 * notifications and then the result. A call without notifications stays one JSON body.
 */
import type { ServerResponse } from 'node:http';

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
  /** Ends the opened stream with the answer's JSON text. */
  end(text: string): void;
}

/** The lazy event stream of `res`; a client that reads nothing of it is cut after `writeTimeoutMs`. */
export function lazyStream(res: ServerResponse, writeTimeoutMs: number): LazyStream {
  let open = false;
  return {
    get open() {
      return open;
    },
    async notify(n) {
      if (res.destroyed || res.writableEnded) return;
      if (!open) {
        open = true;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        guardDrain(res, writeTimeoutMs);
      }
      res.write(event(JSON.stringify({ jsonrpc: '2.0', ...n })));
    },
    end(text) {
      if (!res.destroyed && !res.writableEnded) res.end(event(text));
    },
  };
}
