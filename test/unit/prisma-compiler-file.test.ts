/**
 * The generated Prisma client reads its query compiler from a .wasm file beside it
 * (scripts/prisma-compiler-file.mjs, run after `prisma generate`), never importing the compiler's
 * base64 module, whose text would stay in the heap for the life of the process.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { COMPILER_FILE, useCompilerFile } from '../../scripts/prisma-compiler-file.mjs';

const ROOT = join(import.meta.dirname, '..', '..');
const GENERATED = join(ROOT, 'src', 'db', 'generated');

/** The compiler's loader as Prisma 7's prisma-client generator writes it (node runtime, PostgreSQL). */
const AS_GENERATED = `config.compilerWasm = {
  getRuntime: async () => await import("@prisma/client/runtime/query_compiler_fast_bg.postgresql.mjs"),

  getQueryCompilerWasmModule: async () => {
    const { wasm } = await import("@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.mjs")
    return await decodeBase64AsWasm(wasm)
  },

  importName: "./query_compiler_fast_bg.js"
}
`;

function generatedCopy(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'plaza-prisma-client-'));
  mkdirSync(join(dir, 'internal'));
  writeFileSync(join(dir, 'internal', 'class.ts'), text);
  return dir;
}

describe('the Prisma query compiler as a file', () => {
  it('is how the installed client loads it: the base64 module is never imported', () => {
    const text = readFileSync(join(GENERATED, 'internal', 'class.ts'), 'utf8');
    expect(text).not.toContain('wasm-base64');
    // WebAssembly's magic number; the process below compiles it.
    expect(
      readFileSync(join(GENERATED, 'internal', COMPILER_FILE))
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('\0asm');
    // A fresh process opens the embedded database and queries through Prisma, recording every
    // module it resolves.
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push(r.url); return r; } });
      const { openDatabase, migrate } = await import('./src/db/index.ts');
      const db = await openDatabase({ kind: 'pglite', dataDir: 'memory://' });
      await migrate(db.sql);
      const count = await db.prisma.mcpEndpoint.count();
      await db.close();
      console.log(JSON.stringify({ count, base64: seen.filter((u) => u.includes('wasm-base64')) }));`;
    const run = spawnSync(process.execPath, ['--liftoff-only', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual({ count: 0, base64: [] });
  });

  it("rewrites the generator's loader to read the file it writes from the installed runtime", async () => {
    const dir = generatedCopy(`// before\n${AS_GENERATED}// after\n`);
    expect(await useCompilerFile(dir, ROOT)).toEqual({ result: 'rewritten' });
    const text = readFileSync(join(dir, 'internal', 'class.ts'), 'utf8');
    expect(text).not.toContain('wasm-base64');
    expect(text).toContain(`readFile(new URL('./${COMPILER_FILE}', import.meta.url))`);
    expect(text.startsWith('// before\n')).toBe(true);
    expect(text.endsWith('// after\n')).toBe(true);
    const written = readFileSync(join(dir, 'internal', COMPILER_FILE));
    expect(written.equals(readFileSync(join(GENERATED, 'internal', COMPILER_FILE)))).toBe(true);
  });

  it('leaves the client as generated when the compiler module it names cannot be found', async () => {
    const missing = AS_GENERATED.replaceAll('query_compiler_fast_bg.postgresql', 'query_compiler_gone_bg.postgresql');
    const dir = generatedCopy(missing);
    const outcome = await useCompilerFile(dir, ROOT);
    expect(outcome).toMatchObject({ result: 'unchanged', reason: expect.stringContaining('could not be read') });
    expect(readFileSync(join(dir, 'internal', 'class.ts'), 'utf8')).toBe(missing);
  });

  it('leaves a client of another shape as generated', async () => {
    const other = AS_GENERATED.replace('decodeBase64AsWasm(wasm)', 'compileSomehow(wasm)');
    const dir = generatedCopy(other);
    const outcome = await useCompilerFile(dir, ROOT);
    expect(outcome.result).toBe('unchanged');
    expect(readFileSync(join(dir, 'internal', 'class.ts'), 'utf8')).toBe(other);
  });
});
