/** Shared helpers of the benchmarks: child servers, autocannon runs, result files. */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';

export const ROOT = join(import.meta.dirname, '..');

/**
 * The environment `npm start` gives the server (package.json's start script: each
 * `NAME=${NAME:-value}` before `exec node`, the caller's own value winning as it does in the
 * shell), so servers the benchmarks start run as `npm start` runs them (src/app/allocator-env.ts).
 * `root` is the tree whose package.json to read (bench/ab.ts starts another commit's).
 */
export function startScriptEnv(root = ROOT): Record<string, string> {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start;
  const env: Record<string, string> = {};
  for (const [, name, fallback] of script.matchAll(/(\w+)=\$\{\1:-([^}]*)\}/g))
    env[name!] = process.env[name!] ?? fallback!;
  return env;
}

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
export async function spawnServer(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  healthUrl: string,
): Promise<BenchServer> {
  // Own process group, so stopping `npm start` also stops the server npm started.
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
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
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationS,
    pipelining: 1,
  });
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
  writeFileSync(
    file,
    `${JSON.stringify({ name, date: new Date().toISOString(), machine: machine(), ...data }, null, 2)}\n`,
  );
  process.stdout.write(`wrote ${file}\n`);
}

/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The `p`th percentile (nearest rank) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Result of {@link loadLoop}: like {@link LoadResult} plus the request count. */
export interface LoopResult extends LoadResult {
  requests: number;
}

/**
 * A closed-loop load generator for requests autocannon cannot express (per-worker sessions, body
 * checks): `connections` workers each await `send(worker)` back to back for `durationS` seconds.
 * `send` throws (or returns false) on a failed request; latencies are those of the answered ones.
 */
export async function loadLoop(options: {
  connections: number;
  durationS: number;
  send: (worker: number) => Promise<boolean>;
}): Promise<LoopResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const end = started + options.durationS * 1000;
  const worker = async (w: number): Promise<void> => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        if (await options.send(w)) latencies.push(performance.now() - t0);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, (_, w) => worker(w)));
  const seconds = (performance.now() - started) / 1000;
  return {
    requests: latencies.length + errors,
    requestsPerSec: latencies.length / seconds,
    p50Ms: Number(percentile(latencies, 50).toFixed(3)),
    p99Ms: Number(percentile(latencies, 99).toFixed(3)),
    errors,
    non2xx: 0,
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc; NaN where /proc is missing. */
export function cpuSeconds(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** A child that announced itself with a `ready <json>` line on stdout. */
export interface ReadyChild<T> {
  child: ChildProcess;
  info: T;
  stop(): Promise<void>;
}

/** Spawns `command args` and waits for its `ready <json>` stdout line (stderr is passed on). */
export async function spawnReady<T>(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<ReadyChild<T>> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const info = await new Promise<T>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`${args.join(' ')} did not get ready within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = /^ready (.*)$/m.exec(out);
      if (line?.[1]) {
        clearTimeout(timer);
        resolve(JSON.parse(line[1]) as T);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready`));
    });
  });
  return {
    child,
    info,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A worktree of `ref` (in `dir`/tree) that can run: this tree's node_modules, and a Prisma client
 * generated from `ref`'s own schema (this tree's would name columns `ref`'s migrations never
 * made); a ref without the generate script gets a copy of this tree's client. The caller removes
 * it (`git worktree remove --force`).
 */
export function checkout(ref: string, dir: string): string {
  const tree = join(dir, 'tree');
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', tree, ref], { stdio: 'ignore' });
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  const generate = join(tree, 'scripts/prisma-generate.mjs');
  if (existsSync(generate)) execFileSync(process.execPath, [generate], { cwd: tree, stdio: 'ignore' });
  else cpSync(join(ROOT, 'src/db/generated'), join(tree, 'src/db/generated'), { recursive: true });
  return tree;
}

/** Resident memory of a process in MB, from /proc; NaN where /proc is missing. */
export function rssMb(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; `stop()` gives the peak in MB. */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    const now = rssMb(pid);
    if (now > peak || Number.isNaN(peak)) peak = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const now = rssMb(pid);
      return Math.round(Math.max(peak, Number.isNaN(now) ? 0 : now));
    },
  };
}

/** A port free on 127.0.0.1 right now, for children that must be told theirs. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Spawns a third-party server (a peer the benchmarks compare with) and waits until what it prints
 * (stdout and stderr together) matches `ready`; its output is read and dropped from then on, so a
 * peer that logs every call never blocks on a full pipe. Stopped with SIGTERM, SIGKILL after 5 s.
 */
export async function spawnPeer(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit');
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args.join(' ')} did not get ready within ${timeoutMs} ms:\n${out.slice(-2000)}`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      if (out.length < 100_000) out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        out = '';
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${out.slice(-2000)}`));
    });
  });
  return {
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
}
