/** Runs the real `plaza` command (bin/plaza.mjs) as a child process, as a user would. */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type CommandResult, runChild, startChild, withTestMarkers } from './children.ts';
import { TEST_NODE_ARGS } from './node-flags.ts';
import { TEST_LIMITS } from './test-limits.ts';

export const PLAZA_BIN = join(import.meta.dirname, '..', '..', 'bin', 'plaza.mjs');

export type { CommandResult };
export { TEST_NODE_ARGS };

/** Node's arguments for `plaza <args>` in a test: the test flags (./node-flags.ts), bin/plaza.mjs, then `args`. */
export function plazaArgs(...args: string[]): string[] {
  return [...TEST_NODE_ARGS, PLAZA_BIN, ...args];
}

/** Node flags that run a TypeScript file the way `plaza` runs (bin/plaza.mjs): types stripped by Node where it can, else tsx. */
export const TS_LOADER_ARGS: string[] = process.features.typescript ? [] : ['--import', 'tsx'];

/**
 * Environment for children: the parent's minus anything that would point Plaza elsewhere, plus
 * the test markers (test/support/children.ts), so a child the MCP SDK spawns is found too.
 */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of Object.keys(base))
    if (/^(PLAZA_|DATABASE_URL|REDIS_URL|PORT|HOST|OTEL_)/.test(name)) delete base[name];
  // No public registry here (no network), and a private data folder unless the test names one.
  return withTestMarkers({
    ...base,
    LOG_LEVEL: 'info',
    MCP_REGISTRY_URL: 'off',
    PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-cli-')),
    ...TEST_LIMITS,
    ...env,
  });
}

/** Runs `plaza <args>` to completion. */
export function runPlaza(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CommandResult> {
  return runChild(process.execPath, plazaArgs(...args), { env: childEnv(env), timeoutMs });
}

/** A `plaza serve` child process. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Starts `plaza serve` and waits until /health answers 200 (or the process dies); `nodeArgs`
 * replaces the test flags (./node-flags.ts) for a test of how the server starts without them.
 */
export async function startPlazaServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
  nodeArgs: readonly string[] = TEST_NODE_ARGS,
): Promise<ServerProcess> {
  const port = await freePort();
  const child = startChild(process.execPath, [...nodeArgs, PLAZA_BIN, 'serve'], {
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void exited.then(() => (dead = true));
  while (Date.now() < deadline && !dead) {
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return { child, url, output: () => output, exited };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`plaza serve did not become healthy:\n${output}`);
}
