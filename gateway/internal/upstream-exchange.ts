import type { UpstreamHttpResponse } from '../upstream-http.ts';

/**
 * Reads a whole body as text, refusing more than `limit` bytes. `onBytes` is told the size read so
 * far after every read, and may throw to stop reading: the body is then discarded and its error passes.
 */
export async function readBodyText(
  response: UpstreamHttpResponse,
  limit: number,
  onBytes?: (size: number) => void,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > limit) {
      response.discard();
      throw new UpstreamTooLargeError(limit);
    }
    try {
      onBytes?.(size);
    } catch (error) {
      response.discard();
      throw error;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}

/** Longest and largest the rest of an event stream is read after its answer before it is cut. */
const DRAIN_MS = 5_000;
const DRAIN_BYTES = 64 * 1024;

/**
 * Reads what follows the answer on an event stream (a streamable HTTP server closes it once the
 * request is answered), so the connection goes back to the pool; cutting it at once would cost a
 * socket and an abort error per call. A stream that goes on past DRAIN_BYTES or DRAIN_MS is cut.
 * `chunks` is the iterator the answer was read from.
 */
export function drainRest(chunks: AsyncIterator<Buffer>, res: UpstreamHttpResponse): void {
  const timer = setTimeout(() => res.discard(), DRAIN_MS);
  timer.unref();
  // eslint-disable-next-line @typescript-eslint/no-floating-promises -- its whole body is in try/catch/finally
  void (async () => {
    let size = 0;
    try {
      for (;;) {
        const next = await chunks.next();
        if (next.done) return;
        size += next.value.length;
        if (size > DRAIN_BYTES) return res.discard();
      }
    } catch {
      // Cut or failed after the answer: nothing is waiting for it.
    } finally {
      clearTimeout(timer);
    }
  })();
}

/** An upstream answer larger than the gateway accepts. */
export class UpstreamTooLargeError extends Error {
  constructor(limit: number) {
    super(`the upstream answer exceeds ${limit} bytes`);
    this.name = 'UpstreamTooLargeError';
  }
}

/** Why an upstream exchange failed, in words for the caller (never the upstream's body). */
export function describeUpstreamFailure(error: unknown): string {
  const e = error as { name?: string; message?: string; code?: unknown; cause?: { message?: unknown } };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT')
    return 'the upstream did not answer in time';
  // Timeouts abort with a TimeoutError; an AbortError is the caller's doing.
  if (e.name === 'AbortError') return 'the caller cancelled the call or went away before the upstream answered';
  if (e.code === 'UND_ERR_CONNECT_TIMEOUT') return 'cannot reach the upstream (connect timeout)';
  if (e.code === 'UND_ERR_SOCKET') return 'the upstream closed the connection';
  const code = errorCode(error, 0);
  if (code) return `cannot reach the upstream (${code})`;
  const detail = typeof e.cause?.message === 'string' ? `: ${e.cause.message}` : '';
  return `the upstream request failed (${e.message ?? 'unknown error'}${detail})`;
}

/** The first system error code (ECONNREFUSED, ENOTFOUND…) in an error's cause chain. */
function errorCode(error: unknown, depth: number): string | undefined {
  if (depth > 5 || typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown[] };
  if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return e.code;
  for (const inner of e.errors ?? []) {
    const found = errorCode(inner, depth + 1);
    if (found) return found;
  }
  return errorCode(e.cause, depth + 1);
}
