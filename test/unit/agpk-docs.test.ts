/**
 * What the docs say of AGPK agrees with what Plaza does: docs/sources.md names the characters the
 * schemas accept in `package_id` and `version`, docs/agpk.md says how `~` orders, and the Packages page's publishing guide validates
 * the archive `pack` writes (what gets published), as the builder standard's §9 does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import en from '../../config/content/pages.en.json' with { type: 'json' };
import zh from '../../config/content/pages.zh-CN.json' with { type: 'json' };
import { compareVersions, loadAgpkSchemas } from '../../src/agpk/index.ts';
import { SourceBodySchema } from '../../src/sources/index.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The character class after the first one (`^[A-Za-z0-9][…]*$`: the characters allowed after the first). */
const restClass = (pattern: string) => /^\^\[[^\]]+\](\[[^\]]+\])/.exec(pattern)?.[1];

describe('docs/sources.md', () => {
  const schema = loadAgpkSchemas().manifest.schema as { properties: Record<string, { pattern: string }> };
  const body = SourceBodySchema.shape;
  const row = (field: string) => read('docs/sources.md').match(new RegExp(`^\\| \`${field}\` \\|.*$`, 'm'))?.[0];

  it.each([
    ['package_id', 'id', body.package_id],
    ['version', 'version', body.version],
  ] as const)('names the characters %s may hold as the schemas accept them', (field, manifestField, zod) => {
    const allowed = restClass(schema.properties[manifestField]!.pattern);
    expect(allowed).toBeDefined();
    // The registration route and the manifest agree, and the doc's row names the same class.
    expect(zod.def.checks?.map((c) => String((c as { _zod: { def: { pattern?: RegExp } } })._zod.def.pattern))).toEqual(
      [expect.stringContaining(allowed!)],
    );
    expect(row(field)).toContain(`\`${allowed}\``);
  });
});

describe('docs/agpk.md, version order', () => {
  it('orders a version with ~ as it says: ~ is text in a part, not a pre-release mark', () => {
    expect(read('docs/agpk.md')).toContain('so `1.0~rc1` is not a pre-release');
    expect(compareVersions('1.0~rc1', '1.0')).toBe(1);
    expect(compareVersions('1.0~rc1', '1.0.1')).toBe(1);
    expect(compareVersions('1.0.0-rc.1', '1.0.0')).toBe(-1);
  });
});

describe('the Packages page publishing guide', () => {
  it.each([
    ['en', en.packages.guide],
    ['zh-CN', zh.packages.guide],
  ])('validates the archive pack writes, in %s', (_locale, guide) => {
    const scaffold = /--id (\S+) .*--version (\S+)/.exec(guide.find((s) => s.includes('agpk scaffold'))!)!;
    const pack = /agpk pack (\S+)/.exec(guide.find((s) => s.includes('agpk pack'))!)!;
    const validate = /agpk validate (\S+)/.exec(guide.find((s) => s.includes('agpk validate'))!)!;
    // pack writes <parent>/<id>-<version>.agpk.
    const archive = `${pack[1]!.replace(/[^/]+$/, '')}${scaffold[1]}-${scaffold[2]}.agpk`;
    expect(validate[1]).toBe(archive);
    expect(read('config/agpk/v1/builder-standard.md')).toMatch(/`plaza agpk validate acme\.weather-1\.0\.0\.agpk`/);
  });
});
