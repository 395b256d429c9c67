import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { z } from 'zod';

import { AgpkError } from './errors.ts';

/** One entry of the market's healthy list (`GET {share_url}/share/v1/agpk/sources`). */
export const MarketSourceSchema = z
  .object({
    package_id: z.string().min(1),
    name: z.string().min(1),
    version: z.string().min(1),
    summary: z.string().default(''),
    vendor: z.string().optional(),
    vendor_name: z.string().optional(),
    download_uri: z
      .string()
      .refine((v) => URL.canParse(v) && new URL(v).protocol === 'https:', 'download_uri must be an https URL'),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/i, 'sha256 must be 64 hexadecimal characters')
      .transform((v) => v.toLowerCase()),
  })
  .loose();

/** A market source. */
export type MarketSource = z.infer<typeof MarketSourceSchema>;

const ListSchema = z.object({ sources: z.array(z.unknown()) }).loose();

/** Network options: an extra CA (PEM) to trust, a timeout, and a size cap. */
export interface FetchOptions {
  ca?: string | Buffer;
  /** Longest silence of the connection. Default 30 s. */
  timeoutMs?: number;
  maxBytes?: number;
  /**
   * A server that keeps the connection alive but sends next to nothing is cut: the market list
   * must arrive within one window, and a download must bring 64 KiB in every window. Default 30 s.
   */
  stallWindowMs?: number;
  /** Ends the request (the download's file is removed); the operation then fails with the signal's reason. */
  signal?: AbortSignal;
}

/** What a download must bring in each stall window (~2 KB/s at the default window). */
const MIN_WINDOW_BYTES = 64 * 1024;

function get(url: string, options: FetchOptions, redirects = 0): Promise<http.IncomingMessage> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : u.protocol === 'http:' ? http : undefined;
  if (!mod) return Promise.reject(new AgpkError('bad_request', `unsupported URL scheme in ${url}`));
  return new Promise((resolve, reject) => {
    const req = mod.get(
      u,
      {
        ...(options.ca && u.protocol === 'https:' ? { ca: options.ca } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        timeout: options.timeoutMs ?? 30_000,
        headers: { accept: '*/*' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          if (redirects >= 5) return reject(new AgpkError('upstream_failed', `too many redirects fetching ${url}`));
          const next = new URL(res.headers.location, u);
          if (u.protocol === 'https:' && next.protocol !== 'https:')
            return reject(new AgpkError('upstream_failed', `refusing a redirect from https to ${next.protocol}`));
          return resolve(get(next.toString(), options, redirects + 1));
        }
        if (status !== 200) {
          res.resume();
          return reject(new AgpkError('upstream_failed', `GET ${url} answered HTTP ${status}`));
        }
        resolve(res);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error) =>
      reject(
        options.signal?.aborted
          ? options.signal.reason
          : new AgpkError('upstream_failed', `GET ${url} failed: ${error.message}`, { cause: error }),
      ),
    );
  });
}

/** Adds what to do to a request that failed (not to an interruption, which is no AgpkError). */
function withHint(error: unknown, hint: string): unknown {
  return error instanceof AgpkError && error.code === 'upstream_failed'
    ? new AgpkError('upstream_failed', `${error.message} (${hint})`, { cause: error })
    : error;
}

/** Fetches the healthy source list from the market; entries that do not fit the shape are skipped. */
export async function fetchMarketSources(shareUrl: string, options: FetchOptions = {}): Promise<MarketSource[]> {
  const url = `${shareUrl.replace(/\/+$/, '')}/share/v1/agpk/sources`;
  const res = await get(url, options).catch((error: unknown) => {
    throw withHint(
      error,
      `is a Plaza running at ${shareUrl}? Start it, or point PLAZA_SHARE_URL at the market's base URL`,
    );
  });
  const max = options.maxBytes ?? 16 * 1024 * 1024;
  const windowMs = options.stallWindowMs ?? 30_000;
  const deadline = setTimeout(
    () => res.destroy(new AgpkError('upstream_failed', `${url} did not answer within ${windowMs} ms`)),
    windowMs,
  );
  // Bytes, decoded once at the end: a character split between two reads stays whole.
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res) {
      size += (chunk as Buffer).length;
      if (size > max) throw new AgpkError('upstream_failed', `${url} answered more than ${max} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw error instanceof AgpkError
      ? error
      : new AgpkError('upstream_failed', `GET ${url} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    clearTimeout(deadline);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let parsed;
  try {
    parsed = ListSchema.safeParse(JSON.parse(text));
  } catch {
    throw new AgpkError('upstream_failed', `${url} did not answer JSON`);
  }
  if (!parsed.success) throw new AgpkError('upstream_failed', `${url} did not answer {sources: [...]}`);
  return parsed.data.sources.flatMap((s) => {
    const r = MarketSourceSchema.safeParse(s);
    return r.success ? [r.data] : [];
  });
}

/**
 * Downloads `uri` (https only) to `dest`, hashing while writing. Refuses (and deletes `dest`) when
 * the body exceeds `maxBytes` or its sha256 differs from `expectedSha256`.
 */
export async function downloadArchive(
  uri: string,
  dest: string,
  options: FetchOptions & { expectedSha256: string; onProgress?: (done: number, total: number | null) => void },
): Promise<{ sha256: string; bytes: number }> {
  if (!URL.canParse(uri) || new URL(uri).protocol !== 'https:')
    throw new AgpkError('bad_request', `download_uri must be an https URL: ${uri}`);
  const res = await get(uri, options).catch((error: unknown) => {
    throw withHint(
      error,
      "the package's download origin did not serve it; try again later, or install from an archive file",
    );
  });
  const total = Number(res.headers['content-length']) || null;
  const max = options.maxBytes ?? 2 * 1024 ** 3;
  const hash = createHash('sha256');
  let bytes = 0;
  let windowBytes = 0;
  const windowMs = options.stallWindowMs ?? 30_000;
  const watchdog = setInterval(() => {
    if (windowBytes < MIN_WINDOW_BYTES && bytes < (total ?? Number.POSITIVE_INFINITY)) {
      res.destroy(
        new AgpkError(
          'upstream_failed',
          `download of ${uri} stalled: under ${MIN_WINDOW_BYTES} bytes in ${windowMs} ms`,
        ),
      );
    }
    windowBytes = 0;
  }, windowMs);
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      windowBytes += chunk.length;
      if (bytes > max) return cb(new AgpkError('upstream_failed', `download exceeds ${max} bytes`));
      hash.update(chunk);
      options.onProgress?.(bytes, total);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(res, tap, createWriteStream(dest, { flags: 'wx' }));
  } catch (error) {
    await rm(dest, { force: true });
    options.signal?.throwIfAborted();
    throw error instanceof AgpkError
      ? error
      : new AgpkError('upstream_failed', `download of ${uri} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    clearInterval(watchdog);
  }
  const sha256 = hash.digest('hex');
  if (sha256 !== options.expectedSha256.toLowerCase()) {
    await rm(dest, { force: true });
    throw new AgpkError(
      'bad_request',
      `sha256 mismatch for ${uri}: the market lists ${options.expectedSha256.toLowerCase()}, the download has ${sha256}`,
    );
  }
  return { sha256, bytes };
}

/** Ranks market sources against a free-text query (metadata only, spec §4.4). */
export function rankSources(sources: MarketSource[], query: string): Array<MarketSource & { score: number }> {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  const ranked = sources.map((s) => {
    const id = s.package_id.toLowerCase();
    const name = s.name.toLowerCase();
    const text = `${s.summary} ${s.vendor ?? ''} ${s.vendor_name ?? ''}`.toLowerCase();
    let score = 0;
    for (const t of terms) {
      if (id === t) score += 10;
      if (name === t) score += 8;
      if (id.includes(t)) score += 4;
      if (name.includes(t)) score += 3;
      if (text.includes(t)) score += 1;
    }
    return { ...s, score };
  });
  return ranked
    .filter((s) => terms.length === 0 || s.score > 0)
    .sort((a, b) => b.score - a.score || a.package_id.localeCompare(b.package_id));
}
