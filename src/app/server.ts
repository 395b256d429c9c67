import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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

/** Listens on `port` (0 picks a free one) and `host`. */
export async function startServer(handler: RequestListener, options: { port: number; host: string }): Promise<RunningServer> {
  const server = createServer({ requestTimeout: 120_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 }, handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
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
        const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return stopping;
    },
  };
}
