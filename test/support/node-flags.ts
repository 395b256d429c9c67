/**
 * Node flags for the short-lived Node processes the tests start: Vitest's fork workers
 * (vitest.config.ts) and every `plaza` child (test/support/cli.ts). `--liftoff-only` keeps V8
 * to its baseline WebAssembly compiler, so PGlite's large module is never recompiled by the
 * optimising tier in each process: opening a database costs about a third less CPU, while long
 * query loops run ~45% slower (bench/README.md, "--liftoff-only"), a trade that pays for test
 * processes and not for a long-running server, so `npm start` does not use it. Measured in
 * bench/README.md ("the test suite's CPU").
 */
export const TEST_NODE_ARGS: string[] = ['--liftoff-only'];
