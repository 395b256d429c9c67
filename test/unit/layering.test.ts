/**
 * Pins the layering of DESIGN.md on the real tree (gateway/, probes/, receipts/: no Express, no
 * storage drivers, nothing from src/ but the kernel and declared interfaces, nothing from config/,
 * one import surface, private internal/ folders), and pins the checker itself: fed small trees
 * with one violation each, in every import form, it reports each one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { checkLayering, readImports } from '../support/layering.ts';

const ROOT = join(import.meta.dirname, '..', '..');

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tree of the given files (path → text) in a temporary folder, with clean module surfaces. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'layering-'));
  made.push(root);
  const all = {
    'src/kernel/index.ts': 'export const now = () => 0;\n',
    'src/db/index.ts': 'export type SqlPool = object;\nexport const openDb = () => ({});\n',
    'src/app/create-app.ts': "import express from 'express';\nexport const createApp = () => express();\n",
    'config/schema.ts': 'export const schema = {};\n',
    'gateway/index.ts': "export { relay } from './relay.ts';\n",
    'gateway/relay.ts':
      "import { now } from '../src/kernel/index.ts';\nimport { help } from './internal/help.ts';\nexport const relay = () => help(now());\n",
    'gateway/internal/help.ts': 'export const help = (n: number) => n;\n',
    'probes/index.ts': 'export const probe = 1;\n',
    'receipts/index.ts': "import type { SqlPool } from '../src/db/index.ts';\nexport type Pool = SqlPool;\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('readImports', () => {
  it('reads every import form, with quotes of either kind, and marks type-only ones', () => {
    const text = [
      'import a from "a";',
      "import type { B } from 'b';",
      "import { type C } from 'c';",
      "import { type D, d } from 'd';",
      "import 'e';",
      "export { f } from 'f';",
      "export type { G } from 'g';",
      "export * from 'h';",
      "const i = await import('i');",
      'const j = require(`j`);',
      "import k = require('k');",
      "let l: import('l').L;",
      'const m = await import(name);',
    ].join('\n');
    expect(readImports('x.ts', text).map((r) => [r.specifier, r.kind, r.typeOnly, r.line])).toEqual([
      ['a', 'import', false, 1],
      ['b', 'import', true, 2],
      ['c', 'import', true, 3],
      ['d', 'import', false, 4],
      ['e', 'side-effect', false, 5],
      ['f', 'export', false, 6],
      ['g', 'export', true, 7],
      ['h', 'export', false, 8],
      ['i', 'dynamic', false, 9],
      ['j', 'require', false, 10],
      ['k', 'import-equals', false, 11],
      ['l', 'import-type', true, 12],
      [undefined, 'dynamic', false, 13],
    ]);
  });
});

describe('checkLayering', () => {
  it('passes a clean tree', () => {
    expect(checkLayering(tree({}))).toEqual([]);
  });

  it.each([
    ['Express in gateway/, double quotes', 'gateway/relay.ts', 'import express from "express";\n', 'express'],
    ['an Express type in gateway/', 'gateway/relay.ts', "import type { Request } from 'express';\n", 'express'],
    ['an Express subpath in probes/', 'probes/index.ts', "import { json } from 'express/lib/x';\n", 'express/lib/x'],
    ['a side-effect import of Express', 'receipts/index.ts', "import 'express';\n", 'express'],
    ['require of Express', 'probes/index.ts', "const e = require('express');\n", 'express'],
    ['import = require of Express', 'gateway/relay.ts', 'import e = require("express");\n', 'express'],
    ['Prisma in probes/', 'probes/index.ts', "import { PrismaClient } from '@prisma/client';\n", '@prisma/client'],
    [
      'a dynamic import of the app',
      'gateway/relay.ts',
      "export const app = () => import('../src/app/create-app.ts');\n",
      '../src/app/create-app.ts',
    ],
    [
      'a static import of the app',
      'probes/index.ts',
      "import { createApp } from '../src/app/create-app.ts';\n",
      '../src/app/create-app.ts',
    ],
    [
      'export-from src/',
      'gateway/index.ts',
      "export { createApp } from '../src/app/create-app.ts';\n",
      '../src/app/create-app.ts',
    ],
    [
      'an import type of src/',
      'gateway/relay.ts',
      "let app: import('../src/app/create-app.ts').App;\n",
      '../src/app/create-app.ts',
    ],
    ['config/', 'receipts/index.ts', "import { schema } from '../config/schema.ts';\n", '../config/schema.ts'],
    [
      'config/ in double quotes, dynamically',
      'probes/index.ts',
      'const c = await import("../config/schema.ts");\n',
      '../config/schema.ts',
    ],
    [
      'a value import of a types-only interface',
      'receipts/index.ts',
      "import { openDb } from '../src/db/index.ts';\n",
      '../src/db/index.ts',
    ],
    ['a computed dynamic import', 'gateway/relay.ts', 'const m = await import(process.argv[2]!);\n', '<computed>'],
    [
      'another module past its index',
      'probes/index.ts',
      "import { relay } from '../gateway/relay.ts';\n",
      '../gateway/relay.ts',
    ],
    [
      'src/ reaching a module file',
      'src/app/x.ts',
      "import { relay } from '../../gateway/relay.ts';\n",
      '../../gateway/relay.ts',
    ],
    [
      'src/ reaching a module internal/',
      'src/app/x.ts',
      'import { help } from "../../gateway/internal/help.ts";\n',
      '../../gateway/internal/help.ts',
    ],
    [
      'index.ts re-exporting internal/',
      'gateway/index.ts',
      "export { help } from './internal/help.ts';\n",
      './internal/help.ts',
    ],
    [
      'a src/ folder reaching another internal/',
      'src/app/x.ts',
      "import { h } from '../agpk/internal/h.ts';\n",
      '../agpk/internal/h.ts',
    ],
  ])('reports %s', (_name, file, text, specifier) => {
    const found = checkLayering(tree({ [file]: text, 'src/agpk/internal/h.ts': 'export const h = 1;\n' }));
    expect(found.map((v) => [v.file, v.specifier])).toEqual([[file, specifier]]);
  });

  it('lets a folder use its own internal/ and test/ reach into a module', () => {
    const root = tree({
      'src/agpk/internal/h.ts': 'export const h = 1;\n',
      'src/agpk/pack.ts': "import { h } from './internal/h.ts';\nexport const pack = h;\n",
      'test/unit/help.test.ts': "import { help } from '../../gateway/internal/help.ts';\n",
    });
    expect(checkLayering(root)).toEqual([]);
  });
});

describe('the Plaza tree', () => {
  it('keeps the layering of DESIGN.md', () => {
    expect(checkLayering(ROOT)).toEqual([]);
  });
});
