/**
 * AGPK test helpers: temp folders, hostile tar archives built by hand, and a local HTTPS "market"
 * (a test CA + leaf certificate) serving `/share/v1/agpk/sources` and archive downloads.
 */
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { generate } from 'selfsigned';

import { END_OF_ARCHIVE, padding, type UstarFields, ustarHeader } from '../../src/agpk/internal/ustar.ts';

/** A temp folder removed by `dispose()`. */
export async function tempDir(prefix = 'agpk-test-'): Promise<{ path: string; dispose(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, dispose: () => rm(path, { recursive: true, force: true }) };
}

/**
 * One hand-made archive entry: header fields plus (optional) content. `pax` puts a PAX extended
 * header before it (`path` there overrides the ustar name, so a name of any length is legal tar).
 */
export type RawEntry = UstarFields & { content?: string | Buffer; pax?: Record<string, string> };

/** One PAX record: `<length> <key>=<value>\n`, the length counting its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return `${length}${body}`;
}

/** Builds a gzipped tar from raw entries; `size` defaults to the content length. */
export function rawArchive(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    if (e.pax) {
      const records = Buffer.from(
        Object.entries(e.pax)
          .map(([k, v]) => paxRecord(k, v))
          .join(''),
      );
      parts.push(
        ustarHeader({ path: 'PaxHeader', type: 'x', mode: 0o644, size: records.length }),
        records,
        padding(records.length),
      );
    }
    const content = e.content === undefined ? Buffer.alloc(0) : Buffer.from(e.content);
    parts.push(ustarHeader({ ...e, size: e.size ?? content.length }));
    if (content.length > 0) parts.push(content, padding(content.length));
  }
  parts.push(END_OF_ARCHIVE);
  return gzipSync(Buffer.concat(parts));
}

/** A TLS identity for 127.0.0.1/localhost signed by a throw-away test CA. */
export interface TestTls {
  caCert: string;
  key: string;
  cert: string;
}

/** Creates a test CA and a server certificate it signs. */
export async function createTestTls(): Promise<TestTls> {
  const notAfterDate = new Date(Date.now() + 24 * 3600 * 1000);
  const ca = await generate([{ name: 'commonName', value: 'AGPK test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { caCert: ca.cert, key: leaf.private, cert: leaf.cert };
}

/** A local HTTPS market: set `sources` and `files` (path -> archive file) freely during a test. */
export interface TestMarket {
  url: string;
  sources: Array<Record<string, unknown>>;
  files: Map<string, string>;
  requests: string[];
  close(): Promise<void>;
}

/** Starts the HTTPS market on 127.0.0.1 with an ephemeral port. */
export async function startTestMarket(tls: TestTls): Promise<TestMarket> {
  const market: Omit<TestMarket, 'url' | 'close'> = { sources: [], files: new Map(), requests: [] };
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const path = req.url ?? '/';
    market.requests.push(path);
    if (path.startsWith('/to-http/')) {
      // A redirect down to plain http (the same path on port 9, where nothing listens).
      res.writeHead(302, { location: `http://127.0.0.1:9/${path.slice('/to-http/'.length)}` }).end();
      return;
    }
    if (path.startsWith('/drip/')) {
      // Alive but next to silent: one byte every 100 ms.
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100000' });
      const timer = setInterval(() => res.write('x'), 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (path === '/split/share/v1/agpk/sources') {
      // The list in two reads, cut inside a multi-byte character.
      const body = Buffer.from(JSON.stringify({ sources: market.sources }));
      const cut = body.indexOf(Buffer.from('€')) + 1;
      res.setHeader('content-type', 'application/json');
      res.write(body.subarray(0, cut));
      setTimeout(() => res.end(body.subarray(cut)), 50);
      return;
    }
    if (path === '/share/v1/agpk/sources') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ sources: market.sources }));
      return;
    }
    const file = market.files.get(path);
    if (!file) {
      res.statusCode = 404;
      res.end();
      return;
    }
    readFile(file).then(
      (body) => {
        res.setHeader('content-type', 'application/octet-stream');
        res.setHeader('content-length', String(body.length));
        res.end(body);
      },
      () => {
        res.statusCode = 500;
        res.end();
      },
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    ...market,
    get sources() {
      return market.sources;
    },
    set sources(v) {
      market.sources = v;
    },
    url: `https://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
