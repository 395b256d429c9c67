import { type ErrorCode, isPlazaError, type PlazaError, RateLimitError } from '../kernel/index.ts';

/** The answer shapes Plaza's HTTP surfaces use for errors (DESIGN.md "Errors"). */
export type Surface = 'website' | 'token';

/** One row of the error table. */
export interface ErrorRow {
  status: number;
  /** Code in token API bodies (spec §7 token table). */
  tokenCode: string;
  /** OpenAI-style `error.type`, so OpenAI SDKs raise the matching exception class. */
  openaiType: string;
  /**
   * Status on the token surface when it differs: the §7 token table has no 413 or 415, and an
   * OpenAI SDK raises its BadRequestError only for 400.
   */
  tokenStatus?: number;
}

/**
 * The one table from error code to HTTP status and per-surface code. Pinned by
 * test/unit/error-table.test.ts; handlers throw, they never pick a status.
 */
export const ERROR_TABLE: Readonly<Record<ErrorCode, ErrorRow>> = {
  bad_request: { status: 400, tokenCode: 'BAD_REQUEST', openaiType: 'invalid_request_error' },
  invalid_json: { status: 400, tokenCode: 'BAD_REQUEST', openaiType: 'invalid_request_error' },
  invalid_prompt: { status: 400, tokenCode: 'BAD_REQUEST', openaiType: 'invalid_request_error' },
  invalid_lead: { status: 400, tokenCode: 'BAD_REQUEST', openaiType: 'invalid_request_error' },
  unauthorized: { status: 401, tokenCode: 'UNAUTHORIZED', openaiType: 'authentication_error' },
  forbidden: { status: 403, tokenCode: 'FORBIDDEN', openaiType: 'permission_error' },
  not_found: { status: 404, tokenCode: 'NOT_FOUND', openaiType: 'not_found_error' },
  method_not_allowed: { status: 405, tokenCode: 'METHOD_NOT_ALLOWED', openaiType: 'invalid_request_error' },
  conflict: { status: 409, tokenCode: 'CONFLICT', openaiType: 'conflict_error' },
  payload_too_large: { status: 413, tokenCode: 'BAD_REQUEST', openaiType: 'invalid_request_error', tokenStatus: 400 },
  unsupported_media_type: {
    status: 415,
    tokenCode: 'BAD_REQUEST',
    openaiType: 'invalid_request_error',
    tokenStatus: 400,
  },
  rate_limited: { status: 429, tokenCode: 'RATE_LIMITED', openaiType: 'rate_limit_error' },
  internal: { status: 500, tokenCode: 'INTERNAL_ERROR', openaiType: 'api_error' },
  upstream_failed: { status: 502, tokenCode: 'INTERNAL_ERROR', openaiType: 'api_error' },
  unavailable: { status: 503, tokenCode: 'INTERNAL_ERROR', openaiType: 'api_error' },
};

/** Token API routes (spec §4.7) answer in the token shape; every other route in the website shape. */
export function surfaceOf(path: string): Surface {
  // As Express routes: case-insensitively, with or without a trailing slash.
  const p = path.toLowerCase();
  const trimmed = p.replace(/\/+$/, '');
  if (
    p.startsWith('/api/v1/') ||
    trimmed === '/api/auth/guest-token' ||
    trimmed === '/api/agents' ||
    p.startsWith('/api/agents/') ||
    // The account's agent policy goes with the agents' (issue 35).
    trimmed === '/api/account/agent-policy'
  ) {
    return 'token';
  }
  return 'website';
}

/** What an error becomes on the wire. */
export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const GENERIC_500 = 'Internal server error; retry with backoff and report the request_id to support.';

/**
 * Renders any thrown value for `surface`. Unknown errors become a generic 500 with no stack and
 * no internals; PlazaErrors keep their message (written for the caller).
 */
export function renderError(error: unknown, surface: Surface, requestId: string): ErrorResponse {
  const known: PlazaError | undefined = isPlazaError(error) ? error : undefined;
  const code: ErrorCode = known?.code ?? 'internal';
  const row = ERROR_TABLE[code];
  const message = known ? known.message : GENERIC_500;
  const headers: Record<string, string> = {};
  if (error instanceof RateLimitError) headers['retry-after'] = String(error.retryAfterSeconds);
  if (code === 'unauthorized') headers['www-authenticate'] = 'Bearer realm="plaza"';
  const details = known?.details === undefined ? {} : { details: known.details };
  if (surface === 'token') {
    return {
      status: row.tokenStatus ?? row.status,
      headers,
      body: {
        success: false,
        code: row.tokenCode,
        message,
        request_id: requestId,
        error: { message, type: row.openaiType, code: row.tokenCode, param: known?.param ?? null },
        ...details,
      },
    };
  }
  return { status: row.status, headers, body: { success: false, code, message, request_id: requestId, ...details } };
}
