#!/usr/bin/env node
// The `plaza` command. Plaza is TypeScript with erasable syntax only (tsconfig's
// erasableSyntaxOnly), so Node 24 runs it as it is, stripping the types: `npm start` works right
// after `npm install` with no build step. A Node that cannot strip types goes through tsx's loader.
// Node strips no types under node_modules, so a copy installed as a dependency uses tsx too.
import { enableCompileCache } from 'node:module';

// Node's compile cache (V8's code for each module, on disk; NODE_COMPILE_CACHE names the folder,
// else the system's temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off): after the first
// run, loading Plaza's modules takes about half the time, for `npm start` and every `plaza` command.
enableCompileCache?.();
if (!process.features.typescript || import.meta.url.includes('/node_modules/')) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { main } = await import('../src/cli/main.ts');
await main(process.argv, process.env);
