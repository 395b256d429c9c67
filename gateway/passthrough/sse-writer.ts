/** How a relayed event stream leaves for the client: events gathered per turn of the event loop, headers held for a POST's first events. */
import type { ServerResponse } from 'node:http';

/** Longest a POST's event stream holds its headers back waiting for the first events. */
const HEADERS_HOLD_MS = 100;

/** Writes one relayed event stream (see createSseWriter). */
export interface SseWriter {
  /** Adds event text to what leaves next. */
  add(text: string): void;
  /** Length of the event text added and not yet written (what waits here, for the held-bytes count). */
  readonly pendingLength: number;
  /** Writes what was added once this turn of the event loop is over. */
  schedule(): void;
  /** Writes what is left and ends the response (its headers and length with it, when none left yet). */
  end(): void;
}

/**
 * Events that arrive together leave in one socket write (gathered until this turn of the event
 * loop is over). With `holdHeaders` (a POST's stream, which ends once each request is answered)
 * the headers wait for the first events, at most HEADERS_HOLD_MS, so a call answered in one
 * upstream read leaves in one write: headers, answer and end. Otherwise they go at once.
 */
export function createSseWriter(res: ServerResponse, head: Record<string, string>, holdHeaders: boolean): SseWriter {
  let pending = '';
  let flushTimer: NodeJS.Immediate | undefined;
  const flush = () => {
    flushTimer = undefined;
    if (res.destroyed || (pending === '' && res.headersSent)) return;
    if (!res.headersSent) res.writeHead(200, { ...head, connection: 'keep-alive' });
    if (pending === '') res.flushHeaders();
    else res.write(pending);
    pending = '';
  };
  const headTimer = holdHeaders ? setTimeout(flush, HEADERS_HOLD_MS) : undefined;
  if (!holdHeaders) flush();
  return {
    add(text) {
      pending += text;
    },
    get pendingLength() {
      return pending.length;
    },
    schedule() {
      if (pending !== '') flushTimer ??= setImmediate(flush);
    },
    end() {
      clearTimeout(headTimer);
      if (flushTimer) clearImmediate(flushTimer);
      if (res.destroyed) return;
      if (res.headersSent) res.end(pending);
      else {
        res.writeHead(200, { ...head, 'content-length': Buffer.byteLength(pending) });
        res.end(pending);
      }
    },
  };
}
