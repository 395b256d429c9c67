/** Plumbing of `plaza agpk`: output, exit codes, config, approval prompts, the AGPK context. */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { createInterface } from 'node:readline/promises';

import { Option } from 'commander';

import { ConfigError, loadConfig } from '../../config/index.ts';
import type * as AgpkModule from '../agpk/index.ts';
import type { AgpkContext, Approval, OperationSummary } from '../agpk/index.ts';
import { terminalText } from '../kernel/index.ts';
import { credentialFile, loadCredential } from './credential-store.ts';

/** The environment map handed to the CLI. */
export type Env = Record<string, string | undefined>;
/** The lazily imported AGPK module. */
export type Agpk = typeof AgpkModule;

/** Exit codes: 0 ok, 1 failure or refusal, 2 usage error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A usage error (exit 2). */
export class UsageError extends Error {}

/** An operation stopped by SIGINT/SIGTERM (exit 128 + the signal's number, as a shell reports it). */
export class InterruptedError extends Error {
  readonly signal: 'SIGINT' | 'SIGTERM';

  constructor(signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted (${signal}): the operation was stopped and what it had done was undone`);
    this.signal = signal;
  }
}

/**
 * Runs an install/upgrade/remove that Ctrl-C or SIGTERM may cut short. Without this, Node dies on
 * the signal at once and no cleanup runs: a partial download stays in tmp/, an unregistered
 * install folder and registry.lock stay, and the hook (in a process group of its own) runs on.
 * The first signal aborts `signal` instead — the download stops, the hook's group is killed, the
 * operation undoes itself as on any failure — and the body's failure becomes an InterruptedError.
 * A second signal exits at once (the next operation sweeps what is left, see leftovers.ts).
 */
export async function interruptible<T>(body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSignal = (name: 'SIGINT' | 'SIGTERM'): void => {
    if (controller.signal.aborted) process.exit(128 + constants.signals[name]);
    controller.abort(new InterruptedError(name));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await body(controller.signal);
  } catch (error) {
    throw controller.signal.aborted ? (controller.signal.reason as InterruptedError) : error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function hostVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/** Prints `value` as JSON with --json, else the human text. */
export function out(json: boolean, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

/** Runs one command body with uniform error output and exit codes. */
export async function run(json: boolean, body: (agpk: Agpk) => Promise<number | void>): Promise<void> {
  const agpk = await import('../agpk/index.ts');
  try {
    process.exitCode = (await body(agpk)) ?? EXIT.ok;
  } catch (error) {
    const usage = error instanceof UsageError || error instanceof ConfigError;
    const interrupted = error instanceof InterruptedError ? error.signal : undefined;
    const problems = error instanceof agpk.AgpkError ? error.problems : [];
    const code =
      error instanceof agpk.AgpkError ? error.code : usage ? 'usage' : interrupted ? 'interrupted' : 'internal';
    const message = error instanceof Error ? error.message : String(error);
    if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: { code, message, problems } }, null, 2)}\n`);
    else {
      process.stderr.write(`plaza agpk: ${message}\n`);
      for (const p of problems) process.stderr.write(`  ${p.file} ${p.path}: ${p.message}\n`);
    }
    process.exitCode = interrupted ? 128 + constants.signals[interrupted] : usage ? EXIT.usage : EXIT.failure;
  }
}

/**
 * AGPK_HOME and the market URL from Plaza's configuration: PLAZA_SHARE_URL, else PUBLIC_BASE_URL,
 * else the Plaza `plaza agents login` was pointed at, else this machine's own port.
 */
export function settings(env: Env): { home: string; shareUrl: string } {
  const config = loadConfig(env);
  if (!env['PLAZA_SHARE_URL']?.trim() && !env['PUBLIC_BASE_URL']?.trim()) {
    const stored = loadCredential(credentialFile(env));
    if (stored) return { home: config.agpk.home, shareUrl: stored.url.replace(/\/+$/, '') };
  }
  return config.agpk;
}

function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

async function ask(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** The AGPK context of a command: registry, schemas, market, host version, progress on a TTY. */
export function context(
  agpk: Agpk,
  env: Env,
  options: { trustKey?: string[]; json: boolean; signal?: AbortSignal },
): AgpkContext {
  const { home, shareUrl } = settings(env);
  const tty = interactive() && !options.json;
  return {
    registry: agpk.createRegistry(home),
    schemas: agpk.loadAgpkSchemas(),
    shareUrl,
    hostVersion: hostVersion(),
    trustedKeyFiles: options.trustKey ?? [],
    baseEnv: env,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(tty
      ? {
          onProgress: (id: string, done: number, total: number | null) => {
            const pct = total ? ` ${Math.floor((done / total) * 100)}%` : '';
            process.stderr.write(`\rdownloading ${id}: ${(done / 1048576).toFixed(1)} MiB${pct}   `);
            if (total !== null && done >= total) process.stderr.write('\n');
          },
        }
      : {}),
  };
}

/**
 * The hooks a summarised package runs, for the human to read before approving: each hook's name
 * and file, then its first commands (spec §3.4: approval must be informed).
 */
function hookLines(hooks: OperationSummary['packages'][number]['hooks']): string {
  if (hooks.length === 0) return '    hooks none\n';
  return hooks
    .map((h) => {
      const rest =
        h.more > 0 || h.truncated
          ? [`        … ${h.more > 0 ? `${h.more}${h.truncated ? '+' : ''} more` : 'more'} line(s) in ${h.file}`]
          : [];
      const shown =
        h.commands.length === 0 && !h.truncated ? ['        (no commands)'] : h.commands.map((c) => `        ${c}`);
      return [`    runs hook ${h.hook}: ${h.file}`, ...shown, ...rest].map((l) => `${l}\n`).join('');
    })
    .join('');
}

/** Approval from flags, with TTY prompts when a human is at the terminal (spec §3.4). */
export function approval(options: { approve?: boolean; yes?: boolean; json: boolean }): Approval {
  const tty = interactive();
  return {
    approve: Boolean(options.approve),
    yes: Boolean(options.yes),
    ...(tty ? { confirm: ask } : {}),
    show: (summary) => {
      if (options.json) return;
      process.stderr.write(`\n${summary.action}:\n`);
      // Everything here but the hooks' preview (escaped already) is the publisher's text too.
      const t = (text: string) => terminalText(text, 200);
      for (const p of summary.packages) {
        const kid = t(p.signature_kid ?? '');
        process.stderr.write(
          `  ${t(p.package_id)} ${p.from_version ? `${t(p.from_version)} -> ` : ''}${t(p.version)}  (${t(p.name)}${p.vendor ? `, ${t(p.vendor)}` : ''})\n` +
            `    source ${t(p.source)}\n    sha256 ${t(p.sha256)}\n` +
            `    signature ${p.trusted_signature ? `trusted (${kid})` : p.signed ? `valid but NOT trusted (${kid})` : 'NONE (unsigned)'}\n` +
            `    commands ${t(p.commands.join(', ')) || '-'}\n` +
            hookLines(p.hooks),
        );
      }
    },
  };
}

/** Parses `--args`; invalid JSON is a usage error. */
export function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
  }
}

/** The `--json` option every command takes. */
export const jsonOption = () => new Option('--json', 'print a JSON result for machines');
/** Collects a repeatable option. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];
