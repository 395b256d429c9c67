import { createSseParser } from '../src/kernel/index.ts';
import { isRequest, isResponse, type JsonRpcResponse, parseJson, rawJsonText } from './internal/json-rpc.ts';
import { describeUpstreamFailure as describe, drainRest } from './internal/upstream-exchange.ts';
import { errorAnswer } from './upstream/error-answer.ts';
import type { UpstreamHttp, UpstreamHttpResponse } from './upstream-http.ts';

/** A notification the upstream sent while answering (progress, logging). */
export interface UpstreamNotification {
  method: string;
  params?: unknown;
}

/**
 * A request the upstream sent its client on a call's stream (ping, roots/list,
 * sampling/createMessage, elicitation/create): it waits for an answer POSTed in the same session.
 */
export interface UpstreamServerRequest {
  id: string | number;
  method: string;
  params?: unknown;
}

/** Options of one upstream request. */
export interface UpstreamRequest {
  url: string;
  message: { jsonrpc: '2.0'; id: string | number; method: string; params?: unknown };
  headers: Record<string, string>;
  signal: AbortSignal;
  onNotification?: (n: UpstreamNotification) => void;
  /**
   * Told of each request the upstream sends on the answer's stream, once per id, with the session
   * the answer came in (its `Mcp-Session-Id`): it must answer it there. Without it such a request
   * goes unanswered and the upstream waits for its own timeout.
   */
  onRequest?: (r: UpstreamServerRequest, sessionId: string | null) => void;
  maxBytes: number;
  /**
   * Told the size of the answer read so far, after every read; a text it returns fails the call with
   * it (the gateway may hold no more of this answer: see held-answers), and reading stops.
   */
  onBytes?: (size: number) => string | undefined;
  /**
   * Whether a JSON-RPC error answered under an HTTP error status is the answer (a 2026-07-28
   * server's way), rather than a failure named by its status.
   */
  errorAnswers?: boolean;
}

/** The upstream forgot the session (HTTP 404): open a new one and retry. */
export class SessionExpiredError extends Error {
  constructor() {
    super('upstream session expired');
    this.name = 'SessionExpiredError';
  }
}

/** A failure talking to the upstream, with a message fit for the caller. */
/** How many requests (ping, roots/list…) an upstream may send its client during one call; each is answered. */
export const MAX_REQUESTS_PER_CALL = 32;

export class UpstreamCallError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamCallError';
  }
}

/**
 * Sends one JSON-RPC request over streamable HTTP and returns its response, reading either a JSON
 * body or an SSE stream (forwarding notifications as they arrive). Bounded in size and time.
 */
export async function requestUpstream(
  http: UpstreamHttp,
  request: UpstreamRequest,
): Promise<{ response: JsonRpcResponse; sessionId: string | null }> {
  let res: UpstreamHttpResponse;
  try {
    res = await http(request.url, {
      method: 'POST',
      headers: {
        ...request.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(request.message),
      signal: request.signal,
    });
  } catch (error) {
    throw new UpstreamCallError(describe(error), { cause: error });
  }
  // The spec says 404 for a forgotten session; the SDK's own servers answer 400. Either way the
  // pool re-initialises once, and a second failure is reported as it is.
  if ((res.status === 404 || res.status === 400) && request.headers['mcp-session-id']) {
    res.discard();
    throw new SessionExpiredError();
  }
  if (res.status < 200 || res.status > 299) {
    // A 2026-07-28 server answers its JSON-RPC errors with an HTTP error status: they are its answer.
    const answer = request.errorAnswers && res.status !== 401 ? await errorAnswer(res, request.message.id) : undefined;
    if (answer) return { response: answer, sessionId: null };
    res.discard();
    // A provider with credentials of its own: the caller is told where they go (its WWW-Authenticate is not passed on).
    if (res.status === 401) {
      throw new UpstreamCallError(
        request.headers['authorization'] !== undefined
          ? 'the upstream refused the credential sent as X-PLATFORM-Upstream-Authorization (HTTP 401)'
          : 'the upstream needs a credential of its own (HTTP 401): send it as X-PLATFORM-Upstream-Authorization, with X-PLATFORM-Upstream-Provider naming the provider it is for',
      );
    }
    throw new UpstreamCallError(`the upstream answered HTTP ${res.status}`);
  }
  const sessionId = res.header('mcp-session-id') ?? null;
  const type = res.header('content-type') ?? '';
  const chunks = res.body[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let size = 0;
  const read = async (): Promise<string | undefined> => {
    let chunk;
    try {
      chunk = await chunks.next();
    } catch (error) {
      throw new UpstreamCallError(describe(error), { cause: error });
    }
    if (chunk.done) return undefined;
    size += chunk.value.byteLength;
    if (size > request.maxBytes) {
      res.discard();
      throw new UpstreamCallError(`the upstream answer exceeds ${request.maxBytes} bytes`);
    }
    const refused = request.onBytes?.(size);
    if (refused !== undefined) {
      res.discard();
      throw new UpstreamCallError(refused);
    }
    return decoder.decode(chunk.value, { stream: true });
  };

  if (type.startsWith('text/event-stream')) {
    const parser = createSseParser();
    // An upstream that sends one id twice still gets one answer.
    const asked = new Set<string>();
    for (;;) {
      const text = await read();
      const events = text === undefined ? parser.end() : parser.push(text);
      for (const event of events) {
        if (event.data === undefined) continue;
        let message: unknown;
        try {
          message = parseJson(event.data);
        } catch {
          continue;
        }
        if (isResponse(message) && message.id === request.message.id) {
          drainRest(chunks, res);
          return { response: message, sessionId };
        }
        if (isRequest(message)) {
          // Only ids MCP allows are answered: a string or a number, an integer past 2^53 kept as raw
          // JSON (parseJson), which JSON.stringify writes back as sent. Null or an object names no request.
          const id = message.id;
          const raw = rawJsonText(id);
          const key =
            typeof id === 'string'
              ? `s${id}`
              : typeof id === 'number'
                ? `n${id}`
                : raw === undefined
                  ? undefined
                  : `n${raw}`;
          if (key !== undefined && !asked.has(key)) {
            // Each is a POST back to the upstream: one call may not make Plaza send an unbounded number.
            if (asked.size >= MAX_REQUESTS_PER_CALL) {
              res.discard();
              throw new UpstreamCallError(
                `the upstream sent more than ${MAX_REQUESTS_PER_CALL} requests to its client during one call`,
              );
            }
            asked.add(key);
            request.onRequest?.(
              { id: id as string | number, method: message.method, params: message.params },
              sessionId,
            );
          }
          continue;
        }
        const m = message as { method?: unknown; id?: unknown; params?: unknown };
        if (typeof m.method === 'string' && m.id === undefined)
          request.onNotification?.({ method: m.method, params: m.params });
      }
      if (text === undefined) throw new UpstreamCallError('the upstream closed the stream before the result');
    }
  }
  let body = '';
  for (;;) {
    const text = await read();
    if (text === undefined) break;
    body += text;
  }
  body += decoder.decode();
  let parsed: unknown;
  try {
    parsed = parseJson(body);
  } catch {
    throw new UpstreamCallError('the upstream answered malformed JSON');
  }
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const response = list.find((m) => isResponse(m) && m.id === request.message.id);
  if (!response) throw new UpstreamCallError('the upstream answered without a result for the call');
  return { response: response as JsonRpcResponse, sessionId };
}
