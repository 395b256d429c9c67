import type { ServerResponse } from 'node:http';

/** Writes `body` as the whole JSON answer, with its length (the one writer of a gateway JSON answer that is not held, see answer-writer). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
