/**
 * Where `plaza receipts verify` reads from: a server's answers (refused ones said in one line), an
 * export's lines (each bounded), a JWK Set, a trusted checkpoint, and consistency proofs.
 */
import { readFile } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

import type { Checkpoint } from '../../receipts/index.ts';
import { createLineSplitter, LineTooLongError } from '../kernel/index.ts';
import { fetchOrSay } from './fetch-errors.ts';

/** A usage error of the command (exit 2). */
export class UsageError extends Error {}

/** Whether a --url, --jwks or the like is an http(s) URL rather than a file. */
export const isUrl = (value: string): boolean => /^https?:\/\//i.test(value);

/** Longest export line: a receipt and its proof take a few KB. */
const MAX_LINE = 4 * 1024 * 1024;

/** A GET that throws, naming the server's own reason, unless it answers 2xx. */
export async function fetchOk(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
  const res = await fetchOrSay(url, { headers, signal });
  if (!res.ok) {
    // The server's own words say what to fix (a revoked key, a wrong account).
    const said = await res
      .json()
      .then((body) => (body as { message?: unknown } | null)?.message)
      .catch(() => undefined);
    throw new Error(
      `GET ${url} answered ${res.status}${typeof said === 'string' && said !== '' ? `: ${said.slice(0, 300)}` : ''}`,
    );
  }
  return res;
}

/** The lines of a stream, each at most MAX_LINE characters; `onChunk` is told of every chunk. */
export async function* linesOf(
  chunks: AsyncIterable<Uint8Array | string>,
  onChunk: () => void = () => undefined,
): AsyncGenerator<string> {
  const splitter = createLineSplitter({ maxLineLength: MAX_LINE });
  const decoder = new StringDecoder('utf8');
  let number = 0;
  try {
    for await (const chunk of chunks) {
      onChunk();
      const lines = splitter.push(typeof chunk === 'string' ? chunk : decoder.write(Buffer.from(chunk)));
      number += lines.length;
      yield* lines;
    }
    const rest = splitter.push(decoder.end());
    yield* rest;
    const last = splitter.end();
    if (last !== undefined) yield last;
  } catch (error) {
    if (error instanceof LineTooLongError)
      throw new Error(`line ${number + 1} of the export is longer than ${MAX_LINE} characters`, { cause: error });
    throw error;
  }
}

/** A JWK Set from a URL or a file. */
export async function loadJwks(source: string, idleMs: number): Promise<{ keys: never[] }> {
  const text = isUrl(source)
    ? await (await fetchOk(source, {}, AbortSignal.timeout(idleMs))).text()
    : await readFile(source, 'utf8');
  const jwks = JSON.parse(text) as { keys?: unknown };
  if (!Array.isArray(jwks.keys)) throw new Error(`${source} is not a JWK Set`);
  return jwks as { keys: never[] };
}

/** The JSON of a file: the whole text, or else its first line (an export file). */
async function readJsonFile(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    try {
      return JSON.parse(text.split('\n', 1)[0]!) as unknown;
    } catch {
      throw new UsageError(`${path} holds no JSON`);
    }
  }
}

/** The checkpoint of an earlier export, of a --save-checkpoint file, or of the answer of GET /api/receipts/checkpoints/latest. */
export async function loadTrusted(path: string): Promise<Checkpoint> {
  const { CheckpointJsonSchema, checkpointFromJson } = await import('../../receipts/index.ts');
  const json = (await readJsonFile(path).catch((error: unknown) => {
    // docs/receipts.md passes --trusted and --save-checkpoint the same file: on the first run it is
    // not there yet. Refused all the same (a trusted checkpoint that went missing must not pass).
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new UsageError(
      `--trusted ${path} does not exist. The first verification has no checkpoint to hold the log to: run it without --trusted (with --save-checkpoint to keep its checkpoint), and pass --trusted from the next one on.`,
    );
  })) as { data?: { checkpoint?: unknown } } | null;
  const parsed = CheckpointJsonSchema.safeParse(json?.data?.checkpoint ?? json);
  if (!parsed.success)
    throw new UsageError(`${path} holds no checkpoint (an earlier export, or a --save-checkpoint file)`);
  return checkpointFromJson(parsed.data);
}

/** Where consistency proofs come from: the server (--url) or the --consistency file. */
export function consistencySource(
  options: { consistency?: string | undefined },
  base: string | undefined,
  idleMs: number,
): ((first: number, second: number) => Promise<string[]>) | undefined {
  const file = options.consistency;
  if (file !== undefined) {
    return async (first, second) => {
      const json = (await readJsonFile(file)) as { data?: unknown } | null;
      const body = (json?.data ?? json) as { first?: unknown; second?: unknown; consistency_path?: unknown } | null;
      if (body?.first !== first || body.second !== second) {
        throw new Error(
          `${file} is not the consistency proof from tree size ${first} to ${second} (GET /api/receipts/checkpoints/consistency?first=${first}&second=${second})`,
        );
      }
      return body.consistency_path as string[];
    };
  }
  if (base === undefined) return undefined;
  return async (first, second) => {
    const res = await fetchOk(
      `${base}/api/receipts/checkpoints/consistency?first=${first}&second=${second}`,
      {},
      AbortSignal.timeout(idleMs),
    );
    return ((await res.json()) as { data?: { consistency_path?: string[] } }).data?.consistency_path ?? [];
  };
}
