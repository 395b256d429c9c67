/** Structured logging with redaction of every credential Plaza handles. */
export type { Logger, LoggerOptions } from './logger.ts';
export { createLogger, REDACT_PATHS } from './logger.ts';
export type { RequestLoggerOptions } from './request-logger.ts';
export { loggableUrl, requestLogger } from './request-logger.ts';
