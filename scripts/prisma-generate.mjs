#!/usr/bin/env node
// Runs `prisma generate` without Prisma's schema-engine binary, which these machines cannot
// download: generate does not need the engine, so PRISMA_SCHEMA_ENGINE_BINARY points at a
// placeholder when none is installed; then the client is pointed at a .wasm file for its query
// compiler (scripts/prisma-compiler-file.mjs). Called by `npm install` (postinstall) and `npm run generate`.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { useCompilerFile } from './prisma-compiler-file.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) {
  const placeholder = join(root, 'node_modules', '.cache', 'plaza', 'schema-engine-placeholder');
  if (!existsSync(placeholder)) {
    mkdirSync(dirname(placeholder), { recursive: true });
    writeFileSync(
      placeholder,
      '#!/bin/sh\necho "schema-engine is not available; Plaza applies migrations itself (plaza migrate)" >&2\nexit 1\n',
    );
    chmodSync(placeholder, 0o755);
  }
  env.PRISMA_SCHEMA_ENGINE_BINARY = placeholder;
}
const cli = join(root, 'node_modules', 'prisma', 'build', 'index.js');
const result = spawnSync(process.execPath, [cli, 'generate'], { cwd: root, env, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// The client reads its query compiler from a file instead of holding it as base64 text.
const compiler = await useCompilerFile(join(root, 'src', 'db', 'generated'), root);
if (compiler.result !== 'rewritten')
  process.stderr.write(`prisma-generate: the client keeps its query compiler as base64 text (${compiler.reason})\n`);
