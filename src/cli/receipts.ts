/**
 * `plaza receipts verify`: checks a receipts export offline (a file and a JWKS file) or fetched
 * from a Plaza server (--url with an account API key; --call for one receipt), optionally against
 * a checkpoint trusted from an earlier verification (--trusted). Exit 0 when every check holds, 1 naming the first bad
 * receipt (or an unreadable source), 2 on usage errors.
 */
import { open, writeFile } from 'node:fs/promises';

import type { Command } from 'commander';

import { fetchOrSay } from './fetch-errors.ts';
import { oneReceiptLines } from './receipt-one.ts';
import { consistencySource, fetchOk, isUrl, linesOf, loadJwks, loadTrusted, UsageError } from './receipt-sources.ts';

type Env = Record<string, string | undefined>;

const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

interface VerifyOptions {
  url?: string;
  /** One receipt (by its call id) instead of the whole export, from --url. */
  call?: string;
  key?: string;
  file?: string;
  jwks?: string;
  json?: boolean;
  /** Longest silence of the server, ms. */
  timeoutMs?: string;
  /** A file with a checkpoint verified before (an earlier export, or a --save-checkpoint file). */
  trusted?: string;
  /** With --file: the answer of GET /api/receipts/checkpoints/consistency for the two tree sizes. */
  consistency?: string;
  /** Where to write the verified checkpoint, to pass as --trusted next time. */
  saveCheckpoint?: string;
}

/** Longest silence of a server (headers, JWKS, between chunks of the export), unless --timeout-ms. */
const DEFAULT_IDLE_MS = 30_000;

async function exportLines(
  options: VerifyOptions,
  base: string | undefined,
  idleMs: number,
): Promise<AsyncIterable<string> | Iterable<string>> {
  // Opened here, so a missing or unreadable file is the command's error, said in one line (a
  // stream opened lazily would throw it at nobody).
  if (base === undefined) return linesOf((await open(options.file!, 'r')).createReadStream());
  if (options.call !== undefined)
    return oneReceiptLines(fetchOk, { base, callId: options.call, key: options.key!, idleMs });
  // The export may be long: its time is not bounded, its silences are.
  const idle = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const poke = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(new Error(`${base} went silent for ${idleMs / 1000} s`)), idleMs);
  };
  poke();
  let res: Response;
  try {
    res = await fetchOk(`${base}/api/receipts/export`, { authorization: `Bearer ${options.key!}` }, idle.signal);
    if (!res.body) throw new Error('the export is empty');
  } catch (error) {
    // Else the timer held the process for the rest of the idle limit after saying why it failed.
    clearTimeout(timer);
    throw error;
  }
  return (async function* () {
    try {
      yield* linesOf(res.body! as unknown as AsyncIterable<Uint8Array>, poke);
    } finally {
      clearTimeout(timer);
    }
  })();
}

async function verify(options: VerifyOptions): Promise<number> {
  if (Boolean(options.url) === Boolean(options.file))
    throw new UsageError('give either --url (with --key; or set PUBLIC_BASE_URL) or --file');
  if (options.url && !isUrl(options.url)) throw new UsageError('--url must be an http(s) URL');
  if (options.url && !options.key) throw new UsageError('--url needs --key <account API key>');
  const base = options.url?.replace(/\/+$/, '');
  const jwksSource = options.jwks ?? (base !== undefined ? `${base}/.well-known/jwks.json` : undefined);
  if (!jwksSource) throw new UsageError('--file needs --jwks <file or URL> to check the checkpoint signature');
  const idleMs = options.timeoutMs === undefined ? DEFAULT_IDLE_MS : Number(options.timeoutMs);
  if (!Number.isInteger(idleMs) || idleMs < 1 || idleMs > 3_600_000)
    throw new UsageError('--timeout-ms must be a whole number of milliseconds from 1 to 3600000');
  if (options.consistency !== undefined && (base !== undefined || options.trusted === undefined))
    throw new UsageError('--consistency goes with --file and --trusted');
  if (options.call !== undefined && base === undefined) throw new UsageError('--call goes with --url (not --file)');

  const { renderCheckpoint, verifyExport } = await import('../../receipts/index.ts');
  const trusted = options.trusted === undefined ? undefined : await loadTrusted(options.trusted);
  // The JWKS after the export has answered: its checkpoint is signed by then, maybe with a key made
  // for it (the first checkpoint of a log, or the first after a rotation).
  const lines = await exportLines(options, base, idleMs);
  const jwks = await loadJwks(jwksSource, idleMs);
  const consistencyProof = consistencySource(options, base, idleMs);
  const report = await verifyExport(lines, jwks, {
    ...(trusted ? { trusted } : {}),
    ...(consistencyProof ? { consistencyProof } : {}),
  });
  if (report.ok && !report.checkpoint && base === undefined) {
    // Offline nothing says the log is empty: an export of one with receipts always holds a checkpoint.
    process.stderr.write(
      'plaza receipts verify: FAILED: the export holds no checkpoint, so nothing in it could be verified (an export of a log with receipts always holds one)\n',
    );
    return EXIT.failure;
  }
  if (report.ok && !report.checkpoint && base !== undefined) {
    // An empty export is only fine from a log that has no checkpoint at all.
    const latest = await fetchOrSay(`${base}/api/receipts/checkpoints/latest`, { signal: AbortSignal.timeout(idleMs) });
    await latest.body?.cancel();
    if (latest.status !== 404) {
      process.stderr.write(
        `plaza receipts verify: FAILED: the export holds no checkpoint, but the server's latest checkpoint answered ${latest.status}\n`,
      );
      return EXIT.failure;
    }
  }
  if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  if (report.ok) {
    const cp = report.checkpoint;
    if (cp && options.saveCheckpoint !== undefined)
      await writeFile(options.saveCheckpoint, `${JSON.stringify({ type: 'checkpoint', ...renderCheckpoint(cp) })}\n`);
    if (!options.json) {
      const extends_ = trusted ? `, which extends the trusted checkpoint of tree size ${trusted.treeSize}` : '';
      const what = options.call !== undefined ? `the receipt of ${options.call}` : `${report.receipts} receipt(s)`;
      process.stdout.write(
        cp
          ? `OK: ${what} verified against checkpoint tree_size ${cp.treeSize} root ${cp.rootHash} (key ${cp.keyId})${extends_}\n`
          : 'OK: the export is empty\n',
      );
    }
    return EXIT.ok;
  }
  const f = report.failure!;
  const where =
    f.callId !== undefined
      ? ` at receipt ${f.callId} (seq ${f.seq ?? '?'}, line ${f.line})`
      : f.line > 0
        ? ` at line ${f.line}`
        : '';
  process.stderr.write(`plaza receipts verify: FAILED${where}: ${f.problem}\n`);
  return EXIT.failure;
}

/** Registers `plaza receipts …` on the program. */
export function registerReceiptsCommands(program: Command, env: Env): void {
  const receipts = program.command('receipts').description('tamper-evident receipts of tool calls');
  receipts
    .command('verify')
    .description('verify a receipts export: leaf hashes, inclusion proofs, chain links and the checkpoint signature')
    .option(
      '--url <base>',
      'Plaza base URL to fetch the export from (needs --key; default without --file: $PUBLIC_BASE_URL)',
    )
    .option(
      '--key <api key>',
      'account API key for --url (default: $PLAZA_API_KEY, which keeps it out of process lists)',
    )
    .option('--file <export.jsonl>', 'an export file (from GET /api/receipts/export)')
    .option(
      '--call <call_id>',
      "with --url: only this call's receipt (GET /api/receipts/:call_id), its inclusion proof and checkpoint",
    )
    .option(
      '--jwks <url or file>',
      'the JWK Set with the checkpoint key (default with --url: <base>/.well-known/jwks.json)',
    )
    .option('--json', 'print the report as JSON')
    .option('--timeout-ms <ms>', 'longest silence of the server before giving up (default 30000)')
    .option(
      '--trusted <file>',
      'a checkpoint verified before (an earlier export or --save-checkpoint file): the log must extend it',
    )
    .option(
      '--consistency <file>',
      'with --file and --trusted: the answer of GET /api/receipts/checkpoints/consistency?first=<trusted size>&second=<export size>',
    )
    .option('--save-checkpoint <file>', 'write the verified checkpoint here (for --trusted next time)')
    .action(async (options: VerifyOptions) => {
      try {
        // Without --url or --file, the server the other commands use: PUBLIC_BASE_URL.
        const url = options.url ?? (options.file ? undefined : env['PUBLIC_BASE_URL']?.trim() || undefined);
        process.exitCode = await verify({
          ...options,
          ...(url === undefined ? {} : { url }),
          key: options.key ?? (env['PLAZA_API_KEY']?.trim() || undefined),
        });
      } catch (error) {
        process.stderr.write(`plaza receipts verify: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exitCode = error instanceof UsageError ? EXIT.usage : EXIT.failure;
      }
    });
}
