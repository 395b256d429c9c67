/** Shared helpers of the benchmarks: child servers, autocannon runs, result files. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';

export const ROOT = join(import.meta.dirname, '..');

/** A server child process and its base URL. */
export interface BenchServer {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** Waits until `url` answers 200. */
export async function waitHealthy(url: string, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return performance.now() - started;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

/** Spawns `command args` with `env` and waits for `healthUrl`. */
export async function spawnServer(command: string, args: string[], env: NodeJS.ProcessEnv, healthUrl: string): Promise<BenchServer> {
  // Own process group, so stopping `npm start` also stops the server npm started.
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  await waitHealthy(healthUrl);
  return {
    child,
    url: new URL(healthUrl).origin,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
      // Give the group (npm's child) a moment to finish its own shutdown.
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(-child.pid!, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      process.kill(-child.pid!, 'SIGKILL');
    },
  };
}

/** Result of one load run. */
export interface LoadResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

/** Runs autocannon against `url`. */
export async function load(url: string, options: { connections: number; durationS: number }): Promise<LoadResult> {
  const result = await autocannon({ url, connections: options.connections, duration: options.durationS, pipelining: 1 });
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/** The machine a result was measured on. */
export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

/** Writes a benchmark's figures to bench/results/<name>.json. */
export function saveResult(name: string, data: Record<string, unknown>): void {
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const file = join(ROOT, 'bench', 'results', `${name}.json`);
  writeFileSync(file, `${JSON.stringify({ name, date: new Date().toISOString(), machine: machine(), ...data }, null, 2)}\n`);
  process.stdout.write(`wrote ${file}\n`);
}

/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
