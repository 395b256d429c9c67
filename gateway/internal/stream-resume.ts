import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { describeUpstreamFailure } from './upstream-exchange.ts';

/**
 * Most GETs that resume one POST's event stream upstream. A provider that closes the stream to
 * have its client poll (SEP-1699) is resumed as often as it asks, within this and the call's timeout.
 */
export const MAX_RESUMES = 10;
/** Most resumes in a row the provider may refuse or not answer before the call fails. */
export const MAX_FAILED_RESUMES = 3;
/** The wait before a resume when the provider set no `retry` (the SDK client's first delay too). */
const DEFAULT_RETRY_MS = 1_000;
/** The longest wait before a resume, whatever `retry` the provider asks for. */
const MAX_RETRY_MS = 5_000;

/** What an HTTP header value may hold (RFC 9110 §5.5, visible ASCII, space and tab): undici refuses anything else. */
const HEADER_VALUE = /^[\t\x20-\x7e]+$/;

/**
 * The resume point an event's `id` sets: the id, when it can be sent back as `Last-Event-ID`;
 * undefined when it is empty (the SSE standard's reset) or holds what no header may (then the
 * stream cannot be resumed from where it is, and resuming from an earlier id would replay events).
 */
export function resumePoint(id: string): string | undefined {
  return HEADER_VALUE.test(id) ? id : undefined;
}

/**
 * The wait before resuming a stream: the provider's SSE `retry` (milliseconds; the default when it
 * set none or an unreadable one), doubled for every resume in a row that failed, at most 5 s.
 */
export function resumeDelay(retry: string | undefined, failures: number): number {
  const asked = retry !== undefined && /^\d{1,9}$/.test(retry) ? Number(retry) : DEFAULT_RETRY_MS;
  return Math.min(MAX_RETRY_MS, asked * 2 ** failures);
}

/** Resolves after `ms`, or as soon as `signal` aborts (the call's time is up, or its caller left). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** What one resume came to: the stream to read on, or why there is none (and whether trying again may help). */
export type Reopened = { stream: UpstreamHttpResponse } | { failure: string; retryable: boolean };

/**
 * Opens a POST's event stream again from `lastEventId` with `open` (a GET with Last-Event-ID in
 * the call's session). Only an event stream is one: a 5xx or 429, or no answer at all, may be
 * tried again; any other status ends the resuming (405: the provider does not resume streams,
 * 404: it forgot the session, 400: it does not know the event id).
 */
export async function reopenStream(
  open: (lastEventId: string) => Promise<UpstreamHttpResponse>,
  lastEventId: string,
): Promise<Reopened> {
  let answer: UpstreamHttpResponse;
  try {
    answer = await open(lastEventId);
  } catch (error) {
    return { failure: describeUpstreamFailure(error), retryable: true };
  }
  if (answer.status === 200 && (answer.header('content-type') ?? '').startsWith('text/event-stream'))
    return { stream: answer };
  answer.discard();
  return {
    failure: answer.status === 200 ? 'HTTP 200, not an event stream' : `HTTP ${answer.status}`,
    retryable: answer.status >= 500 || answer.status === 429,
  };
}
