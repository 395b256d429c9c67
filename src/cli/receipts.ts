/**
 * `plaza receipts verify`: checks a receipts export offline (a file and a JWKS file) or fetched
 * from a Plaza server (--url with an account API key). Exit 0 when every check holds, 1 naming the
 * first bad receipt (or an unreadable source), 2 on usage errors.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';

import type { Command } from 'commander';

type Env = Record<string, string | undefined>;

const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

class UsageError extends Error {}

interface VerifyOptions {
  url?: string;
  key?: string;
  file?: string;
  jwks?: string;
  json?: boolean;
}

const isUrl = (value: string): boolean => /^https?:\/\//i.test(value);

async function fetchOk(url: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url, { headers });
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  return res;
}

async function loadJwks(source: string): Promise<{ keys: never[] }> {
  const text = isUrl(source) ? await (await fetchOk(source)).text() : await readFile(source, 'utf8');
  const jwks = JSON.parse(text) as { keys?: unknown };
  if (!Array.isArray(jwks.keys)) throw new Error(`${source} is not a JWK Set`);
  return jwks as { keys: never[] };
}

async function exportLines(options: VerifyOptions): Promise<AsyncIterable<string>> {
  if (options.file) return createInterface({ input: createReadStream(options.file, 'utf8'), crlfDelay: Infinity });
  const base = options.url!.replace(/\/+$/, '');
  const res = await fetchOk(`${base}/api/receipts/export`, { authorization: `Bearer ${options.key!}` });
  if (!res.body) throw new Error('the export is empty');
  return createInterface({ input: Readable.fromWeb(res.body as never), crlfDelay: Infinity });
}

async function verify(options: VerifyOptions): Promise<number> {
  if (Boolean(options.url) === Boolean(options.file)) throw new UsageError('give either --url (with --key) or --file');
  if (options.url && !isUrl(options.url)) throw new UsageError('--url must be an http(s) URL');
  if (options.url && !options.key) throw new UsageError('--url needs --key <account API key>');
  const jwksSource = options.jwks ?? (options.url ? `${options.url.replace(/\/+$/, '')}/.well-known/jwks.json` : undefined);
  if (!jwksSource) throw new UsageError('--file needs --jwks <file or URL> to check the checkpoint signature');

  const { verifyExport } = await import('../../receipts/index.ts');
  const jwks = await loadJwks(jwksSource);
  const report = await verifyExport(await exportLines(options), jwks);
  if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  if (report.ok) {
    if (!options.json) {
      const cp = report.checkpoint;
      process.stdout.write(
        cp
          ? `OK: ${report.receipts} receipt(s) verified against checkpoint tree_size ${cp.treeSize} root ${cp.rootHash} (key ${cp.keyId})\n`
          : 'OK: the export is empty\n',
      );
    }
    return EXIT.ok;
  }
  const f = report.failure!;
  const where = f.callId !== undefined ? `receipt ${f.callId} (seq ${f.seq ?? '?'}, line ${f.line})` : `line ${f.line}`;
  process.stderr.write(`plaza receipts verify: FAILED at ${where}: ${f.problem}\n`);
  return EXIT.failure;
}

/** Registers `plaza receipts …` on the program. */
export function registerReceiptsCommands(program: Command, env: Env): void {
  const receipts = program.command('receipts').description('tamper-evident receipts of tool calls');
  receipts
    .command('verify')
    .description('verify a receipts export: leaf hashes, inclusion proofs, chain links and the checkpoint signature')
    .option('--url <base>', 'Plaza base URL to fetch the export from (needs --key)')
    .option('--key <api key>', 'account API key for --url (default: $PLAZA_API_KEY, which keeps it out of process lists)')
    .option('--file <export.jsonl>', 'an export file (from GET /api/receipts/export)')
    .option('--jwks <url or file>', 'the JWK Set with the checkpoint key (default with --url: <base>/.well-known/jwks.json)')
    .option('--json', 'print the report as JSON')
    .action(async (options: VerifyOptions) => {
      try {
        process.exitCode = await verify({ ...options, key: options.key ?? (env['PLAZA_API_KEY']?.trim() || undefined) });
      } catch (error) {
        process.stderr.write(`plaza receipts verify: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exitCode = error instanceof UsageError ? EXIT.usage : EXIT.failure;
      }
    });
}
