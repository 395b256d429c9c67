/**
 * The C allocator's settings a server was started with. glibc's malloc reads them from the
 * environment when the process starts, so `plaza serve` cannot set them itself: `npm start` does
 * (package.json), and serve reports what it got, so an operator can tell from the debug log.
 *
 * - `MALLOC_ARENA_MAX=2`: without it glibc gives each thread that allocates its own arena (up to
 *   8 per core), and V8's and libuv's worker threads each keep theirs.
 * - `MALLOC_TRIM_THRESHOLD_=0`: free memory at the top of the main arena goes back to the system
 *   (past glibc's 128 KiB of padding) instead of up to 64 MiB of it being kept, as glibc's
 *   sliding threshold keeps it once large blocks have been freed.
 *
 * Together they held the gateway 24–31 MB lower under load and the probe round on embedded
 * storage ~20 MB lower, at a CPU per call the runs could not tell apart (bench/README.md,
 * "2026-11-29, late: the C allocator's settings"). Other C libraries ignore both variables.
 */
const NAMES = ['MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_'] as const;

/** The allocator variables present in `env`, or undefined when none is. */
export function allocatorSettings(env: NodeJS.ProcessEnv): Partial<Record<(typeof NAMES)[number], string>> | undefined {
  const set = NAMES.filter((name) => env[name] !== undefined).map((name) => [name, env[name]!] as const);
  return set.length > 0 ? Object.fromEntries(set) : undefined;
}
