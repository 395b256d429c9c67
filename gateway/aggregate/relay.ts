/**
 * What an upstream sends while it answers `/mcp` (progress, log messages), passed on to the
 * agent's side of the request: progress under the agent's own token, log messages as they came.
 */
import { rawJsonText } from '../internal/json-rpc.ts';
import type { UpstreamNotification } from '../upstream-client.ts';

/** A notification for the agent, on its request's stream. */
export interface AgentNotification {
  method: 'notifications/progress' | 'notifications/message';
  params: Record<string, unknown>;
}

/** Sends a notification on the agent's request's stream (the SDK's, or none on the fast path). */
export type NotifyAgent = (n: AgentNotification) => Promise<void>;

/** A number, or a raw JSON number (past 2^53) as the nearest number; else undefined. */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  const raw = rawJsonText(value);
  return raw === undefined ? undefined : Number(raw);
}

/** MCP's log levels, least severe first. */
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * The upstream's notifications as the agent gets them: progress when the agent asked for it (its
 * `progressToken`), log messages; nothing else (a list change on a call's stream is the
 * connector's business with Plaza's catalog, not the agent's).
 */
export function relayTo(
  notify: NotifyAgent,
  progressToken: unknown,
  /** The least severe log message the agent wants (a 2026-07-28 request's `logLevel`); absent: all. */
  logLevel?: string,
): (n: UpstreamNotification) => void {
  const least = logLevel === undefined ? 0 : Math.max(0, LEVELS.indexOf(logLevel));
  const token = typeof progressToken === 'string' || typeof progressToken === 'number' ? progressToken : undefined;
  return (n) => {
    const p = (typeof n.params === 'object' && n.params !== null ? n.params : {}) as Record<string, unknown>;
    if (n.method === 'notifications/progress' && token !== undefined) {
      // Figures past 2^53 arrive as raw JSON (parseJson): a progress count is a number here.
      const progress = asNumber(p['progress']);
      const total = asNumber(p['total']);
      if (progress === undefined) return;
      void notify({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress,
          ...(total === undefined ? {} : { total }),
          ...(typeof p['message'] === 'string' ? { message: p['message'] } : {}),
        },
      }).catch(() => undefined);
    } else if (
      n.method === 'notifications/message' &&
      typeof p['level'] === 'string' &&
      LEVELS.indexOf(p['level']) >= least
    ) {
      void notify({
        method: 'notifications/message',
        params: {
          level: p['level'],
          data: p['data'],
          ...(typeof p['logger'] === 'string' ? { logger: p['logger'] } : {}),
        },
      }).catch(() => undefined);
    }
  };
}
