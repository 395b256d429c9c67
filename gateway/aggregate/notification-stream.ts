/**
 * A 2025 session's GET stream on `/mcp` (streamable HTTP: the server's messages that belong to no
 * request). `/mcp` sends list changes there (tools, resources, prompts), as the watch of
 * list-watch.ts notices them — the same watch that feeds 2026-07-28 `subscriptions/listen`
 * streams. The session is sealed, so any instance opens its stream; each instance watches its own
 * catalog, so a change reaches every stream without a shared bus.
 *
 * Bounded: `maxPerAgent` streams per agent and `maxStreams` per instance (one more is refused
 * with 429); a comment every `keepAliveMs` keeps proxies from cutting an idle stream; a stream its
 * client does not read is cut once `maxUnreadBytes` wait in it. Nothing is kept after a stream
 * ends: a client that reconnects gets the changes from then on (no event ids, nothing to resume).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';

import { GatewayError, sendGatewayError } from '../error-table.ts';

/** How many streams, and how they are kept alive. */
export interface NotificationStreamLimits {
  maxStreams: number;
  maxPerAgent: number;
  keepAliveMs: number;
  maxUnreadBytes: number;
}

export const DEFAULT_NOTIFICATION_STREAM_LIMITS: NotificationStreamLimits = {
  maxStreams: 1_024,
  maxPerAgent: 8,
  keepAliveMs: 15_000,
  maxUnreadBytes: 64 * 1024,
};

/** The notification each bus event becomes on a 2025 stream (/mcp sends no other). */
const NOTIFICATIONS: Partial<Record<ServerEvent['kind'], string>> = {
  tools_list_changed: 'notifications/tools/list_changed',
  resources_list_changed: 'notifications/resources/list_changed',
  prompts_list_changed: 'notifications/prompts/list_changed',
};

/** The event-stream text of a bus event, or undefined when /mcp sends nothing for it. */
function notificationOf(event: ServerEvent): string | undefined {
  const method = NOTIFICATIONS[event.kind];
  return method === undefined ? undefined : `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method })}\n\n`;
}

/** Whether the client takes an event stream (MCP: a GET must accept text/event-stream). */
function acceptsEventStream(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return accept
    .split(',')
    .map((part) => part.split(';')[0]!.trim().toLowerCase())
    .some((type) => type === 'text/event-stream' || type === 'text/*' || type === '*/*');
}

export interface NotificationStreams {
  /** Answers a GET of a 2025 session of `agentId`: its stream, or a refusal. */
  serve(req: IncomingMessage, res: ServerResponse, agentId: string): void;
  /** Ends every open stream (the server is stopping). */
  endAll(): void;
  /** Streams open on this instance. */
  readonly openCount: number;
}

export function createNotificationStreams(
  bus: ServerEventBus,
  limits: NotificationStreamLimits = DEFAULT_NOTIFICATION_STREAM_LIMITS,
): NotificationStreams {
  const open = new Map<ServerResponse, () => void>();
  const perAgent = new Map<string, number>();

  function refuse(res: ServerResponse, error: GatewayError, headers: Record<string, string> = {}): void {
    sendGatewayError(res, error, headers);
  }

  return {
    serve(req, res, agentId) {
      if (!acceptsEventStream(req))
        return refuse(
          res,
          new GatewayError(
            'not_acceptable',
            'Not Acceptable: a GET on /mcp opens an event stream; accept text/event-stream.',
          ),
        );
      const agentStreams = perAgent.get(agentId) ?? 0;
      if (open.size >= limits.maxStreams || agentStreams >= limits.maxPerAgent)
        return refuse(
          res,
          new GatewayError(
            'too_many_streams',
            open.size >= limits.maxStreams
              ? 'Too many notification streams are open on this Plaza instance; try again in a moment.'
              : `This agent has ${agentStreams} notification streams open on /mcp, the most it may; close one first.`,
          ),
        );
      perAgent.set(agentId, agentStreams + 1);
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      // The headers go now: a client waits for them before it counts the stream as open.
      res.flushHeaders();

      let ended = false;
      const write = (text: string) => {
        if (ended) return;
        // A client that reads nothing fills the socket's buffer: its stream is cut (the
        // connection destroyed, what waits in it dropped), not kept.
        if (res.writableLength > limits.maxUnreadBytes) {
          end();
          res.destroy();
          return;
        }
        res.write(text);
      };
      const unsubscribe = bus.subscribe((event) => {
        const text = notificationOf(event);
        if (text !== undefined) write(text);
      });
      const keepAlive = setInterval(() => write(': keep-alive\n\n'), limits.keepAliveMs);
      keepAlive.unref();
      function end(): void {
        if (ended) return;
        ended = true;
        clearInterval(keepAlive);
        unsubscribe();
        open.delete(res);
        const left = (perAgent.get(agentId) ?? 1) - 1;
        if (left > 0) perAgent.set(agentId, left);
        else perAgent.delete(agentId);
        if (!res.writableEnded) res.end();
      }
      open.set(res, end);
      res.once('close', end);
    },
    endAll() {
      for (const end of [...open.values()]) end();
    },
    get openCount() {
      return open.size;
    },
  };
}
