import { unreachable } from './fetch-errors.ts';
import { markEventStream, markJsonBody } from './mcp-bridge-numbers.ts';
import { readRefusal } from './mcp-bridge-refusal.ts';

/** Largest answer the bridge reads from the gateway for one request (its own limit is 32 MiB). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** Largest single event of the GET stream of server notifications by default (the stream itself has no end). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/**
 * Counts the bytes of the event-stream event being received; throws once one passes `max`. An
 * event ends at an empty line (CRLF, LF or CR line ends), so the SDK's parser, which keeps an
 * event until then, never holds more than `max` of a stream that sends no line end. Line ends are
 * found with Buffer's indexOf (native), not byte by byte in JavaScript: a 16 MiB event took a
 * third of a second that way.
 */
export function eventSizeGuard(max: number): (chunk: Uint8Array) => void {
  let eventBytes = 0;
  let lineBytes = 0;
  /** The last chunk ended with a CR: an LF first in this one is the rest of its CRLF. */
  let afterCr = false;
  return (chunk) => {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const length = bytes.length;
    let at = 0;
    if (afterCr && length > 0) {
      afterCr = false;
      if (bytes[0] === LF) {
        eventBytes++;
        at = 1;
      }
    }
    // The next LF and CR at or after `at` (-1: none left in the chunk), each searched for again only once passed.
    let lf = -2;
    let cr = -2;
    while (at < length) {
      if (lf !== -1 && lf < at) lf = bytes.indexOf(LF, at);
      if (cr !== -1 && cr < at) cr = bytes.indexOf(CR, at);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) {
        lineBytes += length - at;
        eventBytes += length - at;
        break;
      }
      lineBytes += end - at;
      eventBytes += end - at + 1;
      // An empty line ends the event.
      if (lineBytes === 0) eventBytes = 0;
      lineBytes = 0;
      at = end + 1;
      if (end === cr) {
        if (at === length) afterCr = true;
        else if (bytes[at] === LF) {
          eventBytes++;
          at++;
        }
      }
    }
    if (eventBytes > max) throw new Error(`an event of the gateway's notification stream exceeds ${max} bytes`);
  };
}

/** `body` read through `inspect` (which may throw to break it off); `onEnd` learns how it ended. */
function guardedBody(
  body: ReadableStream<Uint8Array>,
  inspect: (chunk: Uint8Array) => void,
  onEnd: (error?: Error) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          onEnd();
          return;
        }
        inspect(value);
        controller.enqueue(value);
      } catch (error) {
        void reader.cancel().catch(() => undefined);
        controller.error(error);
        onEnd(error as Error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The ids of the requests a POST body carries (JSON-RPC message or batch). */
function requestIds(body: unknown): Array<string | number> {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((m) => {
      const message = m as { method?: unknown; id?: unknown };
      return typeof message?.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number')
        ? [message.id]
        : [];
    });
  } catch {
    return [];
  }
}

/** The `_meta` key of a request's protocol version (MCP 2026-07-28: every request carries it). */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * `value` as an `Mcp-Name` header value: as it is when it is printable ASCII without surrounding
 * blanks, otherwise its UTF-8 in base64 between `=?base64?` and `?=` (MCP 2026-07-28's rule).
 */
export function mcpHeaderValue(value: string): string {
  const plain =
    value !== '' &&
    value === value.trim() &&
    !(value.startsWith('=?base64?') && value.endsWith('?=')) &&
    /^[\t\x20-\x7e]*$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/**
 * `init` with the headers MCP 2026-07-28's streamable HTTP asks of a request that carries its
 * protocol version in `_meta` (a stdio client speaking that version has no headers to send):
 * `MCP-Protocol-Version` from the envelope, `Mcp-Method`, and `Mcp-Name` for a request naming a
 * tool, prompt or resource. A server of that version refuses the request without them (-32020).
 * Requests of a session opened with `initialize` carry no envelope, and go as they were.
 */
export function withEnvelopeHeaders(init: RequestInit | undefined): RequestInit | undefined {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return init;
  let message: {
    method?: unknown;
    id?: unknown;
    params?: { name?: unknown; uri?: unknown; _meta?: Record<string, unknown> };
  };
  try {
    message = JSON.parse(init.body) as typeof message;
  } catch {
    return init;
  }
  if (
    message === null ||
    typeof message !== 'object' ||
    Array.isArray(message) ||
    typeof message.method !== 'string' ||
    message.id === undefined
  )
    return init;
  const version = message.params?._meta?.[PROTOCOL_VERSION_META_KEY];
  if (typeof version !== 'string') return init;
  const headers = new Headers(init.headers);
  try {
    headers.set('mcp-protocol-version', version);
    headers.set('mcp-method', message.method);
  } catch {
    // A version or method no header can carry (past Latin-1, a line break, a NUL): the request
    // goes as the client wrote it, for the server to answer, not failed here as if unreachable.
    return init;
  }
  const name = message.method === 'resources/read' ? message.params?.uri : message.params?.name;
  if (typeof name === 'string') headers.set('mcp-name', mcpHeaderValue(name));
  return { ...init, headers };
}

/** A GET of the notification stream answered this way is not worth asking again. */
function refusedForGood(status: number): boolean {
  return status >= 400 && status < 500 && status !== 405 && status !== 408 && status !== 429;
}

/**
 * A notification stream that breaks off (Plaza restarting, a network blip) is reopened for as long
 * as the bridge runs, first after `initialDelayMs` (1 s by default), each time 1.5 times later, at
 * most 10 s apart; the SDK's default gives up after two tries, and the client then got no server
 * notification for the rest of its session.
 */
export function notificationStreamReconnection(initialDelayMs = 1_000) {
  return {
    initialReconnectionDelay: initialDelayMs,
    maxReconnectionDelay: Math.max(initialDelayMs, 10_000),
    reconnectionDelayGrowFactor: 1.5,
    maxRetries: Number.POSITIVE_INFINITY,
  };
}

/**
 * A fetch for the SDK's transport that bounds each POST's answer (past MAX_ANSWER_BYTES it breaks
 * off) and each event of the GET notification stream (past `maxEventBytes`, MAX_EVENT_BYTES by default), and, once a POST's answer has ended or broken off, calls `ended` with the ids it asked: the
 * bridge answers any of them still unanswered, rather than leave the client to its own timeout
 * (an event the SDK cannot parse is only reported to onerror).
 */
export function boundedFetch(
  ended: (ids: Array<string | number>, why: string) => void,
  maxEventBytes = MAX_EVENT_BYTES,
  inner: typeof fetch = fetch,
): typeof fetch {
  return async (input, given) => {
    const init = withEnvelopeHeaders(given);
    const res = await inner(input, init).catch((error: unknown) => {
      throw unreachable(input, error);
    });
    if (init?.method === 'GET' && refusedForGood(res.status)) {
      // The SDK reopens a notification stream that fails; one the gateway refuses stays refused
      // (a session it no longer knows, a revoked agent). A 405 is the SDK's "no stream here".
      if (res.body) void res.body.cancel().catch(() => undefined);
      // A 404 is a session the gateway no longer knows: the bridge starts a new one with the next
      // request, and its stream with it. Other refusals (a revoked agent: 401) last.
      process.stderr.write(
        res.status === 404
          ? 'plaza: gateway: notification stream refused (HTTP 404: the session is gone); it opens again with the new session the next request starts\n'
          : `plaza: gateway: notification stream refused (HTTP ${res.status}); server notifications stop until the client reconnects\n`,
      );
      return new Response(null, { status: 405 });
    }
    // A refusal fails the SDK's send with the gateway's own answers, which the bridge passes on
    // (a 404 first sends the request again in a new session). A 3xx is the SDK's to follow.
    if (init?.method === 'POST' && res.status >= 400) throw await readRefusal(res, MAX_ANSWER_BYTES);
    if (!res.body) {
      const ids = init?.method === 'POST' ? requestIds(init.body) : [];
      if (ids.length > 0) ended(ids, 'the gateway answered without a body');
      return res;
    }
    let body: ReadableStream<Uint8Array>;
    if (init?.method === 'POST') {
      const ids = requestIds(init.body);
      let size = 0;
      const bounded = (chunk: Uint8Array) => {
        size += chunk.byteLength;
        if (size > MAX_ANSWER_BYTES) throw new Error(`the gateway's answer exceeds ${MAX_ANSWER_BYTES} bytes`);
      };
      body = guardedBody(res.body, bounded, (error) => {
        if (ids.length === 0) return;
        ended(
          ids,
          error
            ? `the gateway's answer broke off: ${error.message}`
            : "the gateway's answer ended without a response to this request",
        );
      });
    } else {
      // The GET stream of server notifications may run for days: no total, but no endless event.
      body = guardedBody(res.body, eventSizeGuard(maxEventBytes), () => undefined);
    }
    // The SDK's transport parses what the gateway sent with JSON.parse: numbers it would change
    // (past 2^53) reach it marked, and go to the client as written (mcp-bridge-numbers.ts).
    const type = res.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (type === 'text/event-stream') body = body.pipeThrough(markEventStream());
    else if (type === 'application/json') body = body.pipeThrough(markJsonBody());
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
