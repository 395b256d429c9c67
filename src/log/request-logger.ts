import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Logger } from './logger.ts';

/** Options of requestLogger. */
export interface RequestLoggerOptions {
  /** Paths (without query) never logged, such as health checks polled every second. */
  quietPaths?: ReadonlySet<string>;
  /** The request's id, as the request-id middleware set it. */
  requestId: (req: IncomingMessage) => string | undefined;
}

/** A query parameter name that looks like it carries a credential. */
const SECRET_NAME = /token|key|secret|password|code|sig/i;

/**
 * One `&`-separated part of a query with its credential redacted: a value from the `=` of a name
 * that looks secret to the end of the part. A name starts the part or follows a `?` (clients do
 * send `?a=1?token=…`), and ends at the next `=`.
 */
function redactPart(part: string): string {
  const eq = part.indexOf('=');
  if (eq === -1) return part;
  if (SECRET_NAME.test(part.slice(0, eq))) return `${part.slice(0, eq + 1)}[redacted]`;
  for (let k = part.indexOf('?', eq + 1); k !== -1;) {
    const next = part.indexOf('=', k + 1);
    if (next === -1) return part;
    // Every `?` up to `next` starts a name ending there; the one from `k` holds them all.
    if (SECRET_NAME.test(part.slice(k + 1, next))) return `${part.slice(0, next + 1)}[redacted]`;
    k = part.indexOf('?', next + 1);
  }
  return part;
}

/**
 * The URL as logged: values of query parameters whose names look like credentials are replaced.
 * Linear in the URL: each part and name is looked at once. (One regex over the whole query used
 * to backtrack across every `?` and `token` without an `=`: a 15 KB URL held the event loop 38 s.)
 */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const parts = url.slice(q + 1).split('&');
  const redacted = parts.map(redactPart);
  return redacted.some((part, i) => part !== parts[i]) ? `${url.slice(0, q + 1)}${redacted.join('&')}` : url;
}

/**
 * One log line per finished request: id, method, URL, status and time, at info (warn for 4xx
 * but 404 and 405, error for 5xx). No request or response headers are logged at all, so credentials cannot leak
 * through them, and no per-request child logger is built — pino-http did both and cost ~20% of the
 * CPU of a small JSON answer.
 */
export function requestLogger(log: Logger, options: RequestLoggerOptions) {
  const quiet = options.quietPaths ?? new Set<string>();
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    if (quiet.has(q === -1 ? url : url.slice(0, q))) return next();
    const started = performance.now();
    res.once('finish', () => {
      const status = res.statusCode;
      // 404 and 405 are answers a protocol expects (an MCP client's GET for a notification stream
      // that the endpoint does not offer, a crawler's guess), not a warning on every connection.
      const level = status >= 500 ? 'error' : status >= 400 && status !== 404 && status !== 405 ? 'warn' : 'info';
      if (!log.isLevelEnabled(level)) return;
      log[level](
        {
          request_id: options.requestId(req),
          req: { method: req.method, url: loggableUrl(url) },
          res: { statusCode: status },
          responseTime: Math.round((performance.now() - started) * 10) / 10,
        },
        'request completed',
      );
    });
    next();
  };
}
