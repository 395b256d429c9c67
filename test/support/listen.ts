/**
 * A plain Node HTTP server on an ephemeral loopback port, for a test's hand-written upstream or for
 * a gateway handler under test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening server and its base URL (`http://127.0.0.1:<port>`, no path). */
export interface Listening {
  server: Server;
  url: string;
}

/** Serves `handler` on 127.0.0.1, on a port the system picks. */
export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
