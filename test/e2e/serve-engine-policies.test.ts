/**
 * `plaza serve` sets V8's engine policies at start (src/app/heap-policy.ts, src/app/wasm-policy.ts)
 * when node's command line leaves them open: the baseline WebAssembly compiler only on embedded
 * storage unless PLAZA_WASM_TIER says otherwise, and the heap growth. The servers here start
 * without the test suite's `--liftoff-only`, as `npm start` runs; the debug log says what was set.
 * That V8 then keeps a hot function on its baseline compiler is test/unit/wasm-policy.test.ts's.
 * `npm start` itself gives the server the C allocator's settings (src/app/allocator-env.ts),
 * which serve reports in the same log.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { startChild, stopChild } from '../support/children.ts';
import { childEnv, freePort, type ServerProcess, startPlazaServer } from '../support/cli.ts';

const servers: ServerProcess[] = [];

afterAll(() => {
  for (const s of servers) s.child.kill('SIGKILL');
});

/** The debug lines of a `plaza serve` started as `npm start` starts it, once it is healthy. */
async function startupLines(env: Record<string, string>, nodeArgs: string[]): Promise<string> {
  const server = await startPlazaServer({ LOG_LEVEL: 'debug', ...env }, 60_000, nodeArgs);
  servers.push(server);
  const res = await fetch(`${server.url}/api/products`);
  expect(res.status).toBe(200);
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  return server.output();
}

describe('plaza serve engine policies', () => {
  it("keeps V8 to its baseline WebAssembly compiler on embedded storage, and sets the heap's growth", async () => {
    const output = await startupLines({}, ['--max-semi-space-size=16']);
    expect(output).toContain('"wasmTier":"baseline"');
    expect(output).toContain('"heapGrowingPercent":60');
  });

  it('leaves the compilers alone when PLAZA_WASM_TIER=optimizing or node was given a tiering flag', async () => {
    expect(await startupLines({ PLAZA_WASM_TIER: 'optimizing' }, [])).not.toContain('wasmTier');
    const output = await startupLines({ PLAZA_HEAP_GROWING_PERCENT: '0' }, ['--liftoff-only']);
    expect(output).not.toContain('wasmTier');
    expect(output).not.toContain('heapGrowingPercent');
  });

  it("`npm start` sets the C allocator's settings, and leaves an operator's own", async () => {
    const port = await freePort();
    const env = childEnv({
      PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-e2e-malloc-')),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'debug',
      MALLOC_ARENA_MAX: '4',
    });
    delete env['MALLOC_TRIM_THRESHOLD_'];
    const npm = startChild('npm', ['start'], { cwd: join(import.meta.dirname, '..', '..'), env });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      for (let i = 0; i < 600 && !output.includes('"allocator"'); i++) await new Promise((r) => setTimeout(r, 100));
      expect(output).toContain('"allocator":{"MALLOC_ARENA_MAX":"4","MALLOC_TRIM_THRESHOLD_":"0"}');
    } finally {
      await stopChild(npm);
    }
  });
});
