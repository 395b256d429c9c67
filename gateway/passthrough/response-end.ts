/** How the passthrough watches and ends its response to the client. */
import type { ServerResponse } from 'node:http';

import { sendJson } from '../internal/send-json.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { DROPPED } from './exchange.ts';

/**
 * Runs `then` when `res` closes — at once when it closed already: a caller that left while its
 * call was being prepared (the assertion signed, task results looked up) was gone before the
 * gateway listened, and its call would otherwise go upstream for nobody and stay in flight.
 */
export function whenClosed(res: ServerResponse, then: () => void): void {
  if (res.closed) then();
  else res.once('close', then);
}

/**
 * Resolves once `res` has drained its buffered writes, or closed — or the upstream's body ended
 * (the gateway's timeout, the caller's cancel, a revoked agent or a stopping server discarded it),
 * so that the relay goes on to record and end the call rather than wait for a reader.
 */
export function drainedOrClosed(res: ServerResponse, body: UpstreamHttpResponse['body']): Promise<void> {
  const stream = body as unknown as {
    destroyed?: boolean;
    on?: (event: string, listener: () => void) => void;
    off?: (event: string, listener: () => void) => void;
  };
  if (res.destroyed || stream.destroyed === true) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      stream.off?.('close', done);
      stream.off?.('error', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    stream.on?.('close', done);
    stream.on?.('error', done);
  });
}

/** Ends a POST whose requests were all cancelled: an event stream with no answer (a cancelled request gets none). */
export function endUnanswered(res: ServerResponse, headers: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'content-length': '0',
    ...headers,
  });
  res.end();
}

/** Sends a JSON answer, or ends the POST unanswered when nothing in it may be sent (DROPPED). */
export function sendAnswers(
  res: ServerResponse,
  status: number,
  answers: unknown,
  headers: Record<string, string>,
): void {
  if (answers === DROPPED) endUnanswered(res, headers);
  else sendJson(res, status, answers, headers);
}
