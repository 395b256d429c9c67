/**
 * How a bridged request is answered: one JSON body, or — when the request asked for progress, or
 * Plaza asks the client something during it, and the client takes event streams — an event stream
 * with the progress notifications and requests as they come and then the answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { JsonRpcResponse } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import type { UpstreamNotification } from '../upstream-client.ts';

/** Notifications are dropped while the client has this much unread (a client that does not read cannot grow Plaza's memory). */
const MAX_UNREAD = 1024 * 1024;

/** One bridged request's answer on its way. */
export interface BridgeAnswer {
  /** Passes a notification of the upstream's on to the client (only on an event stream; else dropped). */
  notify(notification: UpstreamNotification): void;
  /**
   * Sends the client a request on the answer's event stream (starting it); false when the client
   * takes no event streams or is gone, and the request cannot be asked.
   */
  request(message: { jsonrpc: '2.0'; id: string; method: string; params?: unknown }): boolean;
  /** Sends the answer and ends the response. */
  end(response: JsonRpcResponse, headers?: Record<string, string>): void;
}

/** An answer to `req`, streamed when `progressToken` is set and the client accepts event streams. */
export function bridgeAnswer(req: IncomingMessage, res: ServerResponse, progressToken: unknown): BridgeAnswer {
  const eventStreams = String(req.headers['accept'] ?? '').includes('text/event-stream');
  const streams = (typeof progressToken === 'string' || typeof progressToken === 'number') && eventStreams;
  let started = false;
  const start = (headers: Record<string, string>) => {
    if (started) return;
    started = true;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  };
  const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
  return {
    notify(notification) {
      if (!streams || res.writableEnded || res.destroyed || res.writableLength > MAX_UNREAD) return;
      // Only the progress of this request, under the token its client gave.
      if (notification.method !== 'notifications/progress') return;
      const params = (notification.params ?? {}) as Record<string, unknown>;
      start({});
      res.write(event({ jsonrpc: '2.0', method: notification.method, params: { ...params, progressToken } }));
    },
    request(message) {
      if (!eventStreams || res.writableEnded || res.destroyed) return false;
      start({});
      res.write(event(message));
      return true;
    },
    end(response, headers = {}) {
      if (res.writableEnded || res.destroyed) return;
      if (!started) return sendJson(res, 200, response, headers);
      res.end(event(response));
    },
  };
}
