import { pino } from 'pino';

/** The logger every module receives; pino's, with Plaza's redaction applied. */
export type Logger = pino.Logger;

/**
 * Paths whose values never reach a log line: credentials of every kind Plaza handles
 * (Authorization, cookies, API keys, the caller's third-party token).
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-platform-upstream-authorization"]',
  'req.headers["x-platform-agin-assertion"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-platform-upstream-authorization"]',
  '*.authorization',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.password',
  'apiKey',
  'api_key',
  'token',
  'password',
];

/** Options of createLogger. */
export interface LoggerOptions {
  level: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read them back. */
  destination?: pino.DestinationStream;
}

/** Creates Plaza's JSON logger. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'plaza' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
