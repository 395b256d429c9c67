import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';

import { nestsDeeperThan } from '../../src/kernel/index.ts';
import { GatewayError } from '../error-table.ts';
import { BODY_CUT, bodyTooLarge, MAX_JSON_DEPTH, NOT_UTF8, parseJson } from './json-rpc.ts';

/**
 * A request's body as UTF-8 text, read to at most `limit` bytes. Throws a GatewayError: past the
 * limit `body_too_large` (the rest left unread), cut short `body_cut`, not UTF-8 `not_utf8`.
 */
export async function readRequestText(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new GatewayError('body_too_large', bodyTooLarge(limit));
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    // The client cut its request short: its mistake (or its leaving), not Plaza's failure.
    throw new GatewayError('body_cut', BODY_CUT);
  }
  const body = Buffer.concat(chunks);
  // Decoded, bytes that are not UTF-8 would become U+FFFD and go upstream as if the caller sent them.
  if (!isUtf8(body)) throw new GatewayError('not_utf8', NOT_UTF8);
  return body.toString('utf8');
}

/**
 * A request's body parsed as JSON (parseJson: integers past 2^53 kept as written), read as
 * readRequestText reads it. Throws a GatewayError also for text that is not JSON (`parse_error`) or
 * that nests deeper than MAX_JSON_DEPTH (`invalid_request`).
 */
export async function readRequestJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const text = await readRequestText(req, limit);
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch {
    throw new GatewayError('parse_error', 'Request body is not valid JSON.');
  }
  if (nestsDeeperThan(parsed, MAX_JSON_DEPTH))
    throw new GatewayError('invalid_request', `Request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  return parsed;
}
