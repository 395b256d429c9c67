import { spawn } from 'node:child_process';

/** How a child process ended. */
export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

/** After the program exits, how long its output pipes may stay open (a background child holding them). */
const PIPE_GRACE_MS = 1_000;

/**
 * Runs a program with a timeout, feeding `input` on stdin, capping captured output. The program
 * gets its own process group, and the timeout SIGKILLs the whole group: a hook that started
 * `sleep 40` (or a daemon) is not left running past its time. It ends when the program exits;
 * a background child still holding its output gets PIPE_GRACE_MS, then the pipes are closed on
 * our side (the child itself is left alone: a hook may start a service on purpose). `signal`
 * (Ctrl-C of the installer) SIGKILLs the group as the timeout does: the program runs in a group of
 * its own, so the terminal's SIGINT never reaches it.
 */
export function runProcess(
  command: string,
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    input?: string;
    timeoutMs: number;
    maxOutputBytes?: number;
    signal?: AbortSignal;
  },
): Promise<RunResult> {
  const max = options.maxOutputBytes ?? 4 * 1024 * 1024;
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < max) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < max) stderr += d.toString('utf8');
    });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    if (options.signal?.aborted) killGroup();
    options.signal?.addEventListener('abort', killGroup, { once: true });
    let finished = false;
    let grace: NodeJS.Timeout | undefined;
    const done = (exitCode: number | null, signal: NodeJS.Signals | null): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', killGroup);
      clearTimeout(grace);
      resolve({ exitCode, signal, stdout, stderr, timedOut, durationMs: Math.round(performance.now() - started) });
    };
    child.on('error', (error) => {
      stderr += error.message;
      done(null, null);
    });
    child.on('close', (code, signal) => done(code, signal));
    child.on('exit', (code, signal) => {
      grace = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        done(code, signal);
      }, PIPE_GRACE_MS);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** The environment a package's hooks and commands get: PATH/HOME/locale of the host plus `extra`. */
export function childEnv(
  base: Record<string, string | undefined>,
  extra: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ']) {
    const v = base[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...extra };
}
