/** Keeps receipts/ free of HTTP frameworks: it is mounted by src/, never the other way round. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', 'receipts');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('receipts/ layering', () => {
  it('imports no HTTP framework and nothing from src/ beyond the kernel and db types', () => {
    const found = files(ROOT);
    expect(found.length).toBeGreaterThan(5);
    for (const file of found) {
      const imports = [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      for (const spec of imports) {
        expect(spec, file).not.toMatch(/^(express|hono|h3|pino-http)/);
        if (spec.includes('/src/')) expect(spec, file).toMatch(/\/src\/(kernel|db)\/index\.ts$/);
      }
    }
  });
});
