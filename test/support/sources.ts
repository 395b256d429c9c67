/**
 * Package source test helpers: real AGPK archives built with the real scaffold + pack (optionally
 * spoiled: a private key, `curl | sh`, no command surface), the HTTPS test origin of agpk.ts with
 * its test CA trusted in this process, and a real SMTP server (smtp-server) collecting mail.
 */
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import tls from 'node:tls';

import { SMTPServer } from 'smtp-server';

import { packPackage, scaffoldPackage } from '../../src/agpk/index.ts';

/** Changes made to a scaffolded package before it is packed. */
export interface PackageSpec {
  id: string;
  version: string;
  /** Extra or replaced files (path relative to the package root → content). */
  files?: Record<string, string>;
  /** Files deleted before packing (e.g. agent-commands.json). */
  remove?: string[];
  /** Keeps a LICENSE file (default true); false removes the one scaffold writes. */
  license?: boolean;
}

/** Scaffolds, edits and packs a package under `root`; returns the archive path and its sha256. */
export async function buildPackage(root: string, spec: PackageSpec): Promise<{ path: string; sha256: string }> {
  const dir = join(root, `${spec.id}-${spec.version}-${Math.random().toString(36).slice(2, 8)}`);
  await scaffoldPackage(dir, { id: spec.id, name: `Package ${spec.id}`, version: spec.version });
  if (spec.license === false) await rm(join(dir, 'LICENSE'));
  for (const [path, content] of Object.entries(spec.files ?? {})) await writeFile(join(dir, path), content);
  for (const path of spec.remove ?? []) await rm(join(dir, path), { force: true });
  const packed = await packPackage(dir, { output: `${dir}.agpk` });
  return { path: packed.archive, sha256: packed.sha256 };
}

/**
 * Trusts `caPem` for this process's TLS clients (undici included), the in-process equivalent of
 * NODE_EXTRA_CA_CERTS. Returns the undo.
 */
export function trustCa(caPem: string): () => void {
  const before = tls.getCACertificates('default');
  tls.setDefaultCACertificates([...before, caPem]);
  return () => tls.setDefaultCACertificates(before);
}

/** A received e-mail. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

/** A running SMTP server that keeps every message it receives. */
export interface SmtpSink {
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the first message (already received or arriving within `timeoutMs`) that matches. */
  waitFor(match: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(body: string): string {
  return body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** A header with RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?UTF-8?Q?…?=`) decoded; adjacent words join. */
function decodeEncodedWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset: string, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : Buffer.from(decodeQuotedPrintable(data.replace(/_/g, ' ')), 'latin1').toString('utf8'),
    );
}

function parseMessage(raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return {
    ...envelope,
    subject: decodeEncodedWords(header('Subject')),
    text: Buffer.from(text, 'latin1').toString('utf8').replace(/\r\n/g, '\n'),
    raw,
  };
}

/** Starts a real SMTP server (no TLS, no auth) on 127.0.0.1. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
        };
        messages.push(parseMessage(Buffer.concat(chunks).toString('latin1'), envelope));
        for (const w of waiters) w();
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(match);
          if (found) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching e-mail within ${timeoutMs} ms (received ${messages.length})`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
