import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Logger } from './logger.ts';

/** Options of requestLogger. */
export interface RequestLoggerOptions {
  /** Paths (without query) never logged, such as health checks polled every second. */
  quietPaths?: ReadonlySet<string>;
  /** The request's id, as the request-id middleware set it. */
  requestId: (req: IncomingMessage) => string | undefined;
}

const SECRET_PARAM = /([?&](?:[^=&]*(?:token|key|secret|password|code|sig)[^=&]*)=)[^&]*/gi;

/** The URL as logged: values of query parameters that look like credentials are replaced. */
export function loggableUrl(url: string): string {
  return url.includes('?') ? url.replace(SECRET_PARAM, '$1[redacted]') : url;
}

/**
 * One log line per finished request: id, method, URL, status and time, at info (warn for 4xx,
 * error for 5xx). No request or response headers are logged at all, so credentials cannot leak
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
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
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
