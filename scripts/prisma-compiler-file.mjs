// After `prisma generate`: the generated client loads Prisma's query compiler (WebAssembly) from a
// .wasm file written beside it, instead of importing it as base64 text. Imported, that text is a
// module's source and an exported string for the life of the process (~5 MB of heap, ~5 MB more
// outside it, in every Plaza process); read from a file, only the compiled module stays.
// The file is decoded from the installed @prisma/client's own base64 module, so it always matches
// the runtime. A client whose text no longer has the expected shape (a Prisma upgrade) is left
// as generated, with a warning: it works, it only holds the text.
// Called by scripts/prisma-generate.mjs; test/unit/prisma-compiler-file.test.ts checks the result.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The compiler file's name, beside the generated client's internal/class.ts. */
export const COMPILER_FILE = 'query_compiler_bg.wasm';

// `const { wasm } = await import("@prisma/client/runtime/query_compiler_<build>_bg.<provider>.wasm-base64.mjs")`
// followed by `return await decodeBase64AsWasm(wasm)`, as Prisma 7's prisma-client generator writes it.
const BASE64_IMPORT =
  /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/query_compiler_\w+_bg\.\w+\.wasm-base64\.mjs)"\)\s*\n(\s*)return await decodeBase64AsWasm\(wasm\)/;

/**
 * Rewrites `<generated>/internal/class.ts` to read the compiler from `COMPILER_FILE`, which it
 * writes. Returns what happened: 'rewritten', or 'unchanged' (with the reason) for a client of
 * another shape or a compiler module it cannot read; it never throws for those, so `npm install`
 * goes on with the client as generated. `root` resolves @prisma/client as the client does.
 */
export async function useCompilerFile(generated, root) {
  const classFile = join(generated, 'internal', 'class.ts');
  const text = readFileSync(classFile, 'utf8');
  const match = BASE64_IMPORT.exec(text);
  if (!match) return { result: 'unchanged', reason: 'the generated client does not import its compiler as base64' };
  const [statement, specifier, indent] = match;
  let bytes;
  try {
    const resolved = createRequire(join(root, 'package.json')).resolve(specifier);
    const { wasm } = await import(pathToFileURL(resolved).href);
    bytes = Buffer.from(String(wasm), 'base64');
  } catch (error) {
    // The module moved or changed its export: the client keeps its own loader, npm install goes on.
    return { result: 'unchanged', reason: `${specifier} could not be read (${error?.message ?? error})` };
  }
  if (!WebAssembly.validate(bytes)) return { result: 'unchanged', reason: `${specifier} holds no valid WebAssembly` };
  writeFileSync(join(generated, 'internal', COMPILER_FILE), bytes);
  const replacement =
    `// Rewritten by scripts/prisma-compiler-file.mjs: the compiler is read from a file, not held as base64 text.\n` +
    `${indent}const { readFile } = await import('node:fs/promises')\n` +
    `${indent}return new WebAssembly.Module(await readFile(new URL('./${COMPILER_FILE}', import.meta.url)))`;
  writeFileSync(classFile, text.replace(statement, replacement));
  return { result: 'rewritten' };
}
