import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';

import express, { type NextFunction, type Request, type Response } from 'express';

import { PlazaError, ValidationError } from '../kernel/index.ts';
import { refuseNulInJson } from './nul.ts';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Refuses a UTF-8 body whose bytes are not UTF-8 (RFC 8259 §8.1: such text is no JSON): decoded,
 * they would become U+FFFD and be stored as if the client had sent them.
 */
function refuseInvalidUtf8(req: unknown, res: unknown, buf: Buffer, encoding: string | null): void {
  if ((encoding === null || /^utf-?8$/i.test(encoding)) && !isUtf8(buf))
    throw new ValidationError('Request body is not valid UTF-8.', { code: 'invalid_json' });
  refuseNulInJson(req, res, buf, encoding);
}

/** Whether a request carries a body (a length other than 0, or chunks). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Whether a request's body is plain JSON as nearly every client sends it: `application/json`
 * (with no parameter but `charset=utf-8`) and no Content-Encoding. Such a body is read by
 * {@link readPlainJson} wherever it arrives.
 */
export function isPlainJsonRequest(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  if (type === undefined) return false;
  const at = type.indexOf(';');
  if ((at === -1 ? type : type.slice(0, at)).trim().toLowerCase() !== 'application/json') return false;
  return plainUtf8(req);
}

/**
 * JSON request bodies for the API routes: a body must be `application/json` (or `+json`), at most
 * `limitBytes`, well-formed and free of NUL characters; each failure becomes the right 4xx
 * PlazaError (415, 413, 400). A plain UTF-8 body (no `Content-Encoding`, no charset or `utf-8`),
 * nearly every one, is read here directly; compressed bodies and other charsets go through
 * body-parser. Both read, check and parse alike: body-parser's stream plumbing, charset and
 * content-type parsing were ~8% of a streamed chat completion's CPU.
 */
export function jsonBody(limitBytes: number) {
  const parse = express.json({
    limit: limitBytes,
    strict: false,
    type: ['application/json', 'application/*+json'],
    verify: refuseInvalidUtf8,
  });
  const failed = (error: unknown, next: NextFunction) => next(bodyFailure(error, limitBytes));
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!METHODS_WITH_BODY.has(req.method) || !hasBody(req)) return next();
    const type = req.headers['content-type'];
    if (
      !(type === 'application/json' || type === 'application/json; charset=utf-8') &&
      !req.is(['application/json', 'application/*+json'])
    ) {
      return next(
        new PlazaError('unsupported_media_type', 'Request bodies must be JSON: send Content-Type: application/json.'),
      );
    }
    if (plainUtf8(req)) {
      readPlainJson(req, limitBytes, (error) => (error === undefined ? next() : failed(error, next)));
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (error === undefined || error === null) return next();
      failed(error, next);
    });
  };
}

/**
 * The PlazaError (415, 413, 400) for a body that could not be read: from the plain reader or
 * body-parser, whose failures carry a `type`.
 */
export function bodyFailure(error: unknown, limitBytes: number): PlazaError {
  if (error instanceof PlazaError) return error;
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large')
    return new PlazaError('payload_too_large', `Request body exceeds the limit of ${limitBytes} bytes.`, {
      cause: error,
    });
  if (type === 'entity.parse.failed')
    return new ValidationError('Request body is not valid JSON.', { code: 'invalid_json', cause: error });
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return new PlazaError('unsupported_media_type', 'Request body must be UTF-8 JSON.', { cause: error });
  return new ValidationError('Request body could not be read.', { cause: error });
}

/** Whether a body is sent as it is (no Content-Encoding) in UTF-8 (no charset, or `utf-8`). */
function plainUtf8(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const type = req.headers['content-type']!;
  const at = type.indexOf(';');
  if (at === -1) return true;
  return /^;\s*charset=utf-8\s*$/i.test(type.slice(at));
}

/** A failure of the plain reader, with body-parser's `type` so both paths answer alike. */
function bodyError(type: string, message: string): Error {
  return Object.assign(new Error(message), { type });
}

/**
 * Reads a plain UTF-8 JSON body into `req.body` as body-parser does with Plaza's options: a
 * declared or received length past `limitBytes` is `entity.too.large`, a length that does not match
 * `Content-Length` or a broken-off request is a read error, the bytes must be UTF-8 without NUL
 * (refuseInvalidUtf8), a byte-order mark is dropped, an empty body is `{}`, and anything that is
 * not JSON is `entity.parse.failed`. On a failure the rest of the request is read off first, so
 * the answer does not meet a client still sending.
 */
export function readPlainJson(
  req: IncomingMessage & { body?: unknown },
  limitBytes: number,
  done: (error?: unknown) => void,
): void {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  const tooLarge = () => bodyError('entity.too.large', 'request entity too large');
  /** Set once the body is refused: what follows is read and dropped until the request ends. */
  let refusal: Error | undefined = length !== undefined && length > limitBytes ? tooLarge() : undefined;
  let parts: Buffer[] = [];
  let received = 0;
  let settled = false;
  const finish = (error?: unknown) => {
    if (settled) return;
    settled = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('close', onClose);
    req.off('error', onClose);
    done(error);
  };
  function onData(chunk: Buffer): void {
    if (refusal) return;
    received += chunk.length;
    if (received > limitBytes) {
      refusal = tooLarge();
      parts = [];
      return;
    }
    parts.push(chunk);
  }
  function onEnd(): void {
    if (refusal) return finish(refusal);
    if (length !== undefined && received !== length)
      return finish(bodyError('request.size.invalid', 'request size did not match content length'));
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts, received);
    parts = [];
    try {
      refuseInvalidUtf8(req, undefined, buf, null);
    } catch (error) {
      return finish(error);
    }
    let text = buf.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    try {
      req.body = text.length === 0 ? {} : JSON.parse(text);
    } catch (error) {
      return finish(Object.assign(error as Error, { type: 'entity.parse.failed' }));
    }
    finish();
  }
  function onClose(): void {
    finish(refusal ?? bodyError('request.aborted', 'request aborted'));
  }
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('close', onClose);
  req.on('error', onClose);
}
