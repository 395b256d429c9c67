/** The shared kernel: errors, identifiers, time, secret hashing, text helpers and the event-stream parser used by every module. */
export type { Clock } from './clock.ts';
export { systemClock } from './clock.ts';
export type { ErrorCode, PlazaErrorOptions } from './errors.ts';
export {
  AuthError,
  ConflictError,
  ForbiddenError,
  isPlazaError,
  NotFoundError,
  PlazaError,
  RateLimitError,
  UnavailableError,
  UpstreamError,
  ValidationError,
} from './errors.ts';
export { isWellFormedRequestId, newId, newRequestId, randomToken } from './ids.ts';
export { nestsDeeperThan, openAiParam, storableJson } from './json.ts';
export { breakStaleLock, createLockFile, type LockStaleness, pidLockStale, processAlive } from './lock-file.ts';
export { digestsEqual, hashSecret } from './secrets.ts';
export { createSseParser, formatSseEvent, type SseEvent, SseEventTooLargeError, type SseParser } from './sse.ts';
export { createLineSplitter, type LineSplitter, LineTooLongError, storableText, terminalText } from './text.ts';
