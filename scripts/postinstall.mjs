#!/usr/bin/env node
// `npm install` runs this: generates the Prisma client, then builds the PGlite data-folder
// template so the first `npm start` (and every test database) skips initdb's ~5 s.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (args) => spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status ?? 1;
const generated = run([join(root, 'scripts', 'prisma-generate.mjs')]);
if (generated !== 0) process.exit(generated);
process.exit(run(['--import', 'tsx', join(root, 'scripts', 'build-pglite-template.ts')]));
