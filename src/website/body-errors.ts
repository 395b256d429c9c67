import type { NextFunction, Request, Response } from 'express';

import { PlazaError, ValidationError } from '../kernel/index.ts';

/** Failures of the shared JSON body reader (src/http/json-body.ts) that §7 folds into one code. */
const BODY_CODES = new Set(['invalid_json', 'unsupported_media_type', 'payload_too_large', 'bad_request']);
const ROUTE_CODES: Record<string, 'invalid_prompt' | 'invalid_lead'> = {
  '/api/agent/intent': 'invalid_prompt',
  '/api/leads': 'invalid_lead',
};

/**
 * Spec §7 gives the two website POST routes one 400 code each, including for bodies that are not
 * valid JSON. The shared body reader runs before any route and raises generic codes, so this
 * error-handling middleware (mounted before the final handler) re-codes them for those two paths,
 * keeping the message and the original error as `cause`.
 */
export function websiteBodyErrors() {
  return (error: unknown, req: Request, _res: Response, next: NextFunction): void => {
    // Express routing is case-insensitive and ignores a trailing slash; match the same way.
    const code = ROUTE_CODES[req.path.toLowerCase().replace(/\/+$/, '')];
    if (code && req.method === 'POST' && error instanceof PlazaError && BODY_CODES.has(error.code)) {
      return next(new ValidationError(error.message, { code, cause: error }));
    }
    next(error);
  };
}
