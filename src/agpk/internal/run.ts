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

/** Runs a program with a timeout (SIGKILL on expiry), feeding `input` on stdin, capping captured output. */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; input?: string; timeoutMs: number; maxOutputBytes?: number },
): Promise<RunResult> {
  const max = options.maxOutputBytes ?? 4 * 1024 * 1024;
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < max) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < max) stderr += d.toString('utf8');
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    const done = (exitCode: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, timedOut, durationMs: Math.round(performance.now() - started) });
    };
    child.on('error', (error) => {
      stderr += error.message;
      done(null, null);
    });
    child.on('close', (code, signal) => done(code, signal));
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** The environment a package's hooks and commands get: PATH/HOME/locale of the host plus `extra`. */
export function childEnv(base: Record<string, string | undefined>, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ']) {
    const v = base[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...extra };
}
