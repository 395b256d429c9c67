/**
 * Plaza's error hierarchy. Handlers throw these; `src/http/error-table.ts` alone decides the HTTP
 * status and the body shape each surface answers with.
 */

/** Every code a PlazaError can carry; each has exactly one row in the HTTP error table. */
export type ErrorCode =
  | 'bad_request'
  | 'invalid_json'
  | 'invalid_prompt'
  | 'invalid_lead'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'rate_limited'
  | 'upstream_failed'
  | 'unavailable'
  | 'internal';

/** Options shared by every PlazaError. */
export interface PlazaErrorOptions {
  /** The library error this one wraps. */
  cause?: unknown;
  /** The request parameter at fault (OpenAI-style `param`), if one is. */
  param?: string | null;
  /** Machine-readable details safe to show the caller (e.g. validation issues). */
  details?: unknown;
}

/** Base of every error Plaza raises on purpose; `code` selects the HTTP answer. */
export class PlazaError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: PlazaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.param = options.param ?? null;
    this.details = options.details;
  }
}

/** Input the caller sent is invalid; `code` may name a surface-specific validation code. */
export class ValidationError extends PlazaError {
  constructor(
    message: string,
    options: PlazaErrorOptions & { code?: 'bad_request' | 'invalid_json' | 'invalid_prompt' | 'invalid_lead' } = {},
  ) {
    super(options.code ?? 'bad_request', message, options);
  }
}

/** The caller is not authenticated (missing, malformed, expired or revoked credential). */
export class AuthError extends PlazaError {
  constructor(message = 'Authentication required', options: PlazaErrorOptions = {}) {
    super('unauthorized', message, options);
  }
}

/** The caller is authenticated but may not do this. */
export class ForbiddenError extends PlazaError {
  constructor(message = 'Not allowed', options: PlazaErrorOptions = {}) {
    super('forbidden', message, options);
  }
}

/** The thing asked for does not exist (or is not visible to the caller). */
export class NotFoundError extends PlazaError {
  constructor(message = 'Not found', options: PlazaErrorOptions = {}) {
    super('not_found', message, options);
  }
}

/** The request conflicts with the current state (e.g. a URL listed by someone else). */
export class ConflictError extends PlazaError {
  constructor(message: string, options: PlazaErrorOptions = {}) {
    super('conflict', message, options);
  }
}

/** The caller exceeded a rate limit; `retryAfterSeconds` becomes `Retry-After`. */
export class RateLimitError extends PlazaError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number, options: PlazaErrorOptions & { code?: never } = {}) {
    super('rate_limited', message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/** A third party Plaza called failed; the message says what failed, never the upstream body. */
export class UpstreamError extends PlazaError {
  constructor(message: string, options: PlazaErrorOptions = {}) {
    super('upstream_failed', message, options);
  }
}

/** A dependency Plaza needs (database, Redis) is not available right now. */
export class UnavailableError extends PlazaError {
  constructor(message: string, options: PlazaErrorOptions = {}) {
    super('unavailable', message, options);
  }
}

/** True when `value` is a PlazaError (also across module copies, by shape). */
export function isPlazaError(value: unknown): value is PlazaError {
  return value instanceof PlazaError;
}
