import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

import type { FetchLike } from './guarded-fetch.ts';
import { SsrfError } from './ssrf.ts';

/** How a download of a package source ended. */
export type DownloadResult =
  | { ok: true; sha256: string; bytes: number }
  /** `transient`: worth retrying (network error, 5xx, 429); otherwise the link is dead or refused. */
  | { ok: false; transient: boolean; reason: string };

/**
 * Downloads `uri` into `file` through the guarded fetch, hashing the stream as it is written (the
 * archive is never held in memory). The registered URI must be https; redirects are followed
 * (bounded, each hop SSRF-checked) by the guarded fetch. Integrity does not rest on the transport:
 * the caller compares `sha256` with the registered digest.
 */
export async function downloadSource(
  uri: string,
  file: string,
  fetch: FetchLike,
  signal?: AbortSignal,
): Promise<DownloadResult> {
  if (!uri.startsWith('https://')) return { ok: false, transient: false, reason: 'download_uri is not an https URL' };
  let response: Response;
  try {
    response = await fetch(uri, {
      headers: { accept: 'application/gzip, application/octet-stream, */*' },
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (error instanceof SsrfError) return { ok: false, transient: false, reason: error.message };
    return { ok: false, transient: true, reason: `unreachable: ${describe(error)}` };
  }
  if (response.status !== 200 || response.body === null) {
    await response.body?.cancel();
    const transient = response.status >= 500 || response.status === 429;
    return { ok: false, transient, reason: `HTTP ${response.status} from the download origin` };
  }
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    const source = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
    source.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
    });
    await pipeline(source, createWriteStream(file, { mode: 0o600 }));
  } catch (error) {
    const ssrf = findSsrf(error);
    if (ssrf) return { ok: false, transient: false, reason: ssrf.message };
    return { ok: false, transient: true, reason: `download interrupted: ${describe(error)}` };
  }
  return { ok: true, sha256: hash.digest('hex'), bytes };
}

function findSsrf(error: unknown): SsrfError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof SsrfError) return e;
  return undefined;
}

/**
 * The top error's first line and the first error code down its causes (ECONNREFUSED,
 * ERR_SSL_…): the reason is shown on the public source page, and the causes' own messages carry
 * resolved addresses (`connect ECONNREFUSED 10.0.0.7:443`) and OpenSSL's raw text.
 */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  let code: string | undefined;
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4 && code === undefined; e = e.cause, depth++) {
    const found = (e as { code?: unknown }).code;
    if (typeof found === 'string') code = found;
  }
  const text = message.split('\n')[0]!.slice(0, 200);
  return code && !text.includes(code) ? `${text} (${code})` : text;
}
