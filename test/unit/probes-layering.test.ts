/** Keeps probes/ framework-free: no HTTP framework, nothing from src/ but the kernel, one surface. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', 'probes');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const importsOf = (file: string) => [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);

describe('probes/ layering', () => {
  it('imports no HTTP framework and nothing from src/ beyond the kernel', () => {
    const found = files(ROOT);
    expect(found.length).toBeGreaterThan(8);
    for (const file of found) {
      for (const spec of importsOf(file)) {
        expect(spec, file).not.toMatch(/^(express|hono|h3|pino-http|@prisma|pg$|@electric-sql)/);
        if (spec.includes('/src/')) expect(spec, file).toMatch(/\/src\/kernel\/index\.ts$/);
      }
    }
  });

  it('is used from outside only through probes/index.ts', () => {
    const outside = ['src', 'gateway', 'receipts'].flatMap((dir) => {
      try {
        return files(join(ROOT, '..', dir));
      } catch {
        return [];
      }
    });
    for (const file of outside) {
      for (const spec of importsOf(file)) {
        if (/(^|\/)probes\//.test(spec)) expect(spec, relative(join(ROOT, '..'), file)).toMatch(/\/probes\/index\.ts$/);
      }
    }
  });
});
