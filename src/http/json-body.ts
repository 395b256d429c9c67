import { isUtf8 } from 'node:buffer';

import express, { type NextFunction, type Request, type Response } from 'express';

import { PlazaError, ValidationError } from '../kernel/index.ts';
import { refuseNulInJson } from './nul.ts';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Refuses a UTF-8 body whose bytes are not UTF-8 (RFC 8259 §8.1: such text is no JSON): decoded,
 * they would become U+FFFD and be stored as if the client had sent them.
 */
function refuseInvalidUtf8(req: unknown, res: unknown, buf: Buffer, encoding: string | null): void {
  if ((encoding === null || /^utf-?8$/i.test(encoding)) && !isUtf8(buf)) throw new ValidationError('Request body is not valid UTF-8.', { code: 'invalid_json' });
  refuseNulInJson(req, res, buf, encoding);
}

function hasBody(req: Request): boolean {
  const length = req.get('content-length');
  return req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
}

/**
 * JSON request bodies for the API routes: a body must be `application/json` (or `+json`), at most
 * `limitBytes`, well-formed and free of NUL characters; each failure becomes the right 4xx
 * PlazaError (415, 413, 400).
 */
export function jsonBody(limitBytes: number) {
  const parse = express.json({ limit: limitBytes, strict: false, type: ['application/json', 'application/*+json'], verify: refuseInvalidUtf8 });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!METHODS_WITH_BODY.has(req.method) || !hasBody(req)) return next();
    if (!req.is(['application/json', 'application/*+json'])) {
      return next(new PlazaError('unsupported_media_type', 'Request bodies must be JSON: send Content-Type: application/json.'));
    }
    parse(req, res, (error?: unknown) => {
      if (error === undefined || error === null) return next();
      if (error instanceof PlazaError) return next(error);
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') {
        return next(new PlazaError('payload_too_large', `Request body exceeds the limit of ${limitBytes} bytes.`, { cause: error }));
      }
      if (type === 'entity.parse.failed') {
        return next(new ValidationError('Request body is not valid JSON.', { code: 'invalid_json', cause: error }));
      }
      if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
        return next(new PlazaError('unsupported_media_type', 'Request body must be UTF-8 JSON.', { cause: error }));
      }
      return next(new ValidationError('Request body could not be read.', { cause: error }));
    });
  };
}
