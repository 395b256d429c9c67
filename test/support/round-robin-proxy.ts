/**
 * A tiny round-robin HTTP load balancer for multi-instance tests: each incoming request goes to the
 * next backend in turn (no stickiness, no retries), the request body is forwarded as received and
 * the answer streamed back unbuffered (SSE included). It records which backend served what, so a
 * test can prove that a conversation really crossed instances.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One forwarded request, as the proxy saw it. */
export interface ProxiedRequest {
  backend: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The request body (bodies are small in these tests). */
  body: string;
  status: number;
}

/** A running proxy. */
export interface RoundRobinProxy {
  url: string;
  /** Every request forwarded so far, in arrival order. */
  log: ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * Starts a proxy on 127.0.0.1 in front of `backends` (base URLs like `http://127.0.0.1:1234`). The
 * array is read on every request, so a test may start the proxy first (to know its URL) and fill
 * in the backends later; with none, requests get 502.
 */
export async function startRoundRobinProxy(backends: string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const log: ProxiedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    if (backends.length === 0) return res.writeHead(502, { 'content-type': 'text/plain' }).end('no backend');
    const index = next++ % backends.length;
    const target = new URL(backends[index]!);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const entry: ProxiedRequest = {
      backend: index,
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: body.toString(),
      status: 0,
    };
    log.push(entry);
    const headers = { ...req.headers, host: target.host };
    delete headers['content-length'];
    delete headers['transfer-encoding'];
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...headers, 'content-length': String(body.length) },
      },
      (answer) => {
        entry.status = answer.statusCode ?? 0;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
      else res.destroy();
    });
    // A client that goes away (e.g. closes its SSE stream) cancels the upstream request too.
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
