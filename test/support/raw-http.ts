import { connect } from 'node:net';

/**
 * Writes `bytes` as they are to the server at `baseUrl` (a request no HTTP client would send:
 * malformed, oversized headers…), half-closes, and resolves with everything it answered.
 */
export function sendRawHttp(baseUrl: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}
