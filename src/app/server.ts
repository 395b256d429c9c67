import { createServer, type RequestListener, type Server } from 'node:http';
import { type AddressInfo, Server as NetServer, type Socket } from 'node:net';

import { MCP_PATH, renderError, surfaceOf } from '../http/index.ts';
import { newRequestId, ValidationError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';

/**
 * On stop, how long a connection accepted before the signal may take to deliver its first request.
 * Its bytes may already be sent but still unread while the event loop is busy; closing it as idle
 * would drop a call the client believes in flight (ECONNRESET).
 */
const FIRST_REQUEST_GRACE_MS = 2_000;
const SWEEP_MS = 100;
/**
 * On stop, how long the listener stays open: connections the kernel completed before the signal
 * wait in the accept queue until the event loop polls, and closing the listener resets them.
 */
const ACCEPT_GRACE_MS = 100;

/** A listening server. */
export interface RunningServer {
  server: Server;
  port: number;
  /** Base URL for clients on this machine. */
  url: string;
  /**
   * Stops accepting connections and waits for in-flight requests, at most `timeoutMs`; then
   * closes what is left. Resolves when the server is closed.
   */
  stop(timeoutMs?: number): Promise<void>;
}

/** The server could not listen on its port and host; `code` is the system's (EADDRINUSE, EACCES, …). */
export class ListenError extends Error {
  readonly code: string | undefined;
  readonly port: number;
  readonly host: string;

  constructor(cause: NodeJS.ErrnoException, port: number, host: string) {
    super(`cannot listen on ${host}:${port}: ${cause.message}`, { cause });
    this.name = 'ListenError';
    this.code = cause.code;
    this.port = port;
    this.host = host;
  }
}

/** Node's status for a request it could not parse (as its default answer has it), and what to say. */
function clientErrorStatus(code: string | undefined): [number, string, string] {
  if (code === 'HPE_HEADER_OVERFLOW')
    return [431, 'Request Header Fields Too Large', 'The request headers are too large.'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request Timeout', 'The request took too long to arrive.'];
  // The client half-closed its connection before the body its Content-Length announced.
  if (code === 'HPE_INVALID_EOF_STATE')
    return [400, 'Bad Request', 'The request body ended before the length its Content-Length announced.'];
  return [400, 'Bad Request', 'The request is not well-formed HTTP.'];
}

/** The request line's target at the start of `packet` (`POST /api/v1/… HTTP/1.1`), if it is there. */
const REQUEST_LINE = /^[A-Z]{1,16} (\S{1,8192}) HTTP\/1\.[01]\r?\n/;

/**
 * The path of the request Node's parser refused: from the bytes it failed on when they start with
 * the request line (headers a client wrote at once, as HTTP clients do, arrive together), else
 * from the request being answered on the connection (a body cut short); undefined when neither
 * tells, e.g. headers that overflowed in a later read than their request line.
 */
function refusedPath(
  error: NodeJS.ErrnoException & { rawPacket?: unknown },
  inFlightUrl: string | undefined,
): string | undefined {
  const packet = error.rawPacket;
  const line = Buffer.isBuffer(packet)
    ? REQUEST_LINE.exec(packet.toString('latin1', 0, Math.min(packet.length, 8_300)))
    : null;
  const url = line?.[1] ?? inFlightUrl;
  return url?.split('?', 1)[0];
}

/**
 * A request Node's parser refuses never reaches the app: instead of Node's bare status line it
 * gets the error shape of its path's surface and a request id, like every other 4xx — the token
 * API's (through the error table: 400 BAD_REQUEST with an OpenAI `error` object, the status an
 * OpenAI SDK raises a BadRequestError for; a 408 stays 408, which SDKs retry), the website's, or,
 * when the parser failed in the body of a request to an MCP endpoint (cut short, say), a JSON-RPC
 * error.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, log: Logger | undefined): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: { url?: string } } })
    ._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [httpStatus, httpReason, message] = clientErrorStatus(error.code);
  let [status, reason] = [httpStatus, httpReason];
  const requestId = newRequestId();
  const path = refusedPath(error, inFlight?.req?.url);
  let body: string;
  if (MCP_PATH.test(path ?? '')) {
    body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
  } else if (path !== undefined && surfaceOf(path) === 'token') {
    const rendered = renderError(new ValidationError(message, { param: null }), 'token', requestId);
    if (status !== 408) [status, reason] = [rendered.status, 'Bad Request'];
    body = JSON.stringify(rendered.body);
  } else {
    body = JSON.stringify({ success: false, code: 'bad_request', message, request_id: requestId });
  }
  // As the request log has a refused request (its 4xx at warn), with the id the client was given.
  log?.warn(
    { request_id: requestId, req: { url: path ?? null }, res: { statusCode: status }, parser: error.code },
    'request refused before it reached the app',
  );
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Listens on `port` (0 picks a free one) and `host`; rejects with a ListenError when it cannot.
 * `log` gets a line for each request Node's parser refuses (the app's request log never sees them).
 */
export async function startServer(
  handler: RequestListener,
  options: { port: number; host: string; log?: Logger },
): Promise<RunningServer> {
  const server = createServer({ requestTimeout: 120_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 }, handler);
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(new ListenError(error, options.port, options.host));
    server.once('error', failed);
    server.listen(options.port, options.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(error, socket, options.log),
  );
  // Per connection: how many of its requests are unanswered (undefined until the first arrives).
  const connections = new Map<Socket, { active: number | undefined }>();
  let stoppingSince: number | undefined;
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { active: undefined });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (req, res) => {
    const state = connections.get(req.socket);
    if (!state) return;
    state.active = (state.active ?? 0) + 1;
    if (stoppingSince !== undefined && !res.headersSent) res.setHeader('connection', 'close');
    res.once('close', () => (state.active! -= 1));
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  let stopping: Promise<void> | undefined;
  return {
    server,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    stop(timeoutMs = 10_000) {
      stopping ??= new Promise<void>((resolve) => {
        stoppingSince = Date.now();
        const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
        timer.unref();
        // Stop accepting after the accept queue is drained. Not http.Server#close: it also closes
        // every connection without a request in progress, including those whose first request is
        // sent but not yet read. Instead a sweep closes connections with nothing to answer, giving
        // new ones a grace; answers given while stopping say `Connection: close`.
        const sweep = () => {
          const now = Date.now();
          for (const [socket, state] of connections) {
            const idle =
              state.active === undefined ? now - stoppingSince! >= FIRST_REQUEST_GRACE_MS : state.active === 0;
            if (idle) socket.destroySoon();
          }
        };
        const sweeper = setInterval(sweep, SWEEP_MS);
        setTimeout(() => {
          NetServer.prototype.close.call(server, () => {
            clearTimeout(timer);
            clearInterval(sweeper);
            resolve();
          });
          sweep();
        }, ACCEPT_GRACE_MS);
      });
      return stopping;
    },
  };
}
