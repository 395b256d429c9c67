/**
 * The import graph as the TypeScript compiler reads it, and the layering DESIGN.md states, checked
 * over a tree. Every import form counts: `import … from`, `export … from`, side-effect `import '…'`,
 * dynamic `import()`, `require()`, `import x = require()`, and `import('…')` in type positions —
 * type-only imports too (an Express type in gateway/ is Express in gateway/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

import ts from 'typescript';

/** One module reference in a source file. */
export interface ImportRef {
  /** The module specifier; undefined for a dynamic `import()`/`require()` of a computed value. */
  specifier: string | undefined;
  kind: 'import' | 'export' | 'side-effect' | 'dynamic' | 'require' | 'import-equals' | 'import-type';
  /** Erased at run time (`import type`, `export type`, every named element `type`, `import('…')` types). */
  typeOnly: boolean;
  /** 1-based. */
  line: number;
}

const CODE_FILE = /\.(ts|mts|cts|js|mjs|cjs)$/;

function literalText(node: ts.Node | undefined): string | undefined {
  return node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
    ? node.text
    : undefined;
}

/** Every module reference in `text` (a file named `fileName`), in source order. */
export function readImports(fileName: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const out: ImportRef[] = [];
  const add = (node: ts.Node, specifier: string | undefined, kind: ImportRef['kind'], typeOnly: boolean) => {
    out.push({ specifier, kind, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (clause === undefined) add(node, literalText(node.moduleSpecifier), 'side-effect', false);
      else {
        const named = clause.namedBindings;
        const allTypes =
          clause.name === undefined &&
          named !== undefined &&
          ts.isNamedImports(named) &&
          named.elements.length > 0 &&
          named.elements.every((e) => e.isTypeOnly);
        add(node, literalText(node.moduleSpecifier), 'import', clause.isTypeOnly || allTypes);
      }
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      const clause = node.exportClause;
      const allTypes =
        clause !== undefined &&
        ts.isNamedExports(clause) &&
        clause.elements.length > 0 &&
        clause.elements.every((e) => e.isTypeOnly);
      add(node, literalText(node.moduleSpecifier), 'export', node.isTypeOnly || allTypes);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, literalText(node.moduleReference.expression), 'import-equals', node.isTypeOnly);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, literalText(node.argument.literal), 'import-type', true);
    } else if (ts.isCallExpression(node)) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword)
        add(node, literalText(node.arguments[0]), 'dynamic', false);
      else if (ts.isIdentifier(node.expression) && node.expression.text === 'require')
        add(node, literalText(node.arguments[0]), 'require', false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** One broken rule: where, what was imported, and which rule it breaks. */
export interface Violation {
  /** Path from the tree's root, with `/`. */
  file: string;
  line: number;
  specifier: string;
  rule: string;
}

/** What one framework-free module may depend on. */
export interface ModuleRule {
  /** Folder under the root (`gateway`). */
  dir: string;
  /** Package specifiers it must not import (bare names and their subpaths). */
  forbiddenPackages: RegExp;
  /**
   * Files outside the module (root-relative) it may import, besides other modules' `index.ts`;
   * `typeOnly` ones only with imports erased at run time (a declared interface, not an implementation).
   */
  allowed: readonly { file: string; typeOnly: boolean }[];
}

/** Express and every other HTTP framework or its middleware: the edge lives in src/. */
const FRAMEWORKS =
  /^(express|express-[\w-]+|@types\/express(-[\w-]+)?|hono|h3|koa|fastify|pino-http|cors|helmet|http-proxy-middleware)(\/|$)/;
/** Database drivers and Prisma: storage comes in through interfaces. */
const DATABASES = /^(@prisma\/[\w-]+|prisma|pg|pg-[\w-]+|@electric-sql\/[\w-]+|pglite-prisma-adapter|ioredis)(\/|$)/;
const KERNEL = { file: 'src/kernel/index.ts', typeOnly: false };

/**
 * The layering of DESIGN.md ("Dependencies point one way"): gateway/, probes/ and receipts/ depend
 * on the kernel and declared interfaces only — never on Express, the rest of src/ or config/.
 * receipts/ writes through the database client it is given (raw SQL on its pool, see the
 * decision records), so it may name the client's types from `src/db/index.ts`, nothing more.
 */
export const PLAZA_MODULES: readonly ModuleRule[] = [
  { dir: 'gateway', forbiddenPackages: new RegExp(`${FRAMEWORKS.source}|${DATABASES.source}`), allowed: [KERNEL] },
  { dir: 'probes', forbiddenPackages: new RegExp(`${FRAMEWORKS.source}|${DATABASES.source}`), allowed: [KERNEL] },
  { dir: 'receipts', forbiddenPackages: FRAMEWORKS, allowed: [KERNEL, { file: 'src/db/index.ts', typeOnly: true }] },
];

/** Folders never walked: dependencies, generated code, data. test/ is left out on purpose (see checkLayering). */
const SKIPPED = new Set(['node_modules', 'test', 'generated']);

function codeFiles(root: string, dir = root): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    if (e.name.startsWith('.') || SKIPPED.has(e.name)) return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? codeFiles(root, path) : CODE_FILE.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

const posix = (path: string) => path.split(sep).join('/');

/**
 * Checks every code file under `root` (but test/, node_modules/ and generated code) against
 * `modules`:
 * - a module's files import no forbidden package, nothing from config/, and from outside the
 *   module only the files it is allowed and other modules' `index.ts`;
 * - every file outside a module reaches it only through its `index.ts`, so its `internal/` files
 *   are private to it;
 * - a module's `index.ts` re-exports nothing from `internal/`: what others use lives in a public file;
 * - any folder's `internal/` (src/agpk/internal/ too) is imported only from within that folder.
 * A computed `import()`/`require()` in a module is reported too: what it loads cannot be checked.
 * test/ may reach into a module's files (a unit test of a private helper is the module's own).
 */
export function checkLayering(root: string, modules: readonly ModuleRule[] = PLAZA_MODULES): Violation[] {
  const violations: Violation[] = [];
  const moduleOf = (file: string) => modules.find((m) => file.startsWith(`${m.dir}/`));
  for (const path of codeFiles(root)) {
    const file = posix(relative(root, path));
    const own = moduleOf(file);
    for (const ref of readImports(path, readFileSync(path, 'utf8'))) {
      const report = (rule: string) =>
        violations.push({ file, line: ref.line, specifier: ref.specifier ?? '<computed>', rule });
      const spec = ref.specifier;
      if (spec === undefined) {
        if (own !== undefined) report(`${own.dir}/ loads a computed module name, which no check can follow`);
        continue;
      }
      if (!spec.startsWith('.')) {
        if (own?.forbiddenPackages.test(spec))
          report(`${own.dir}/ must not import ${spec} (HTTP frameworks and storage stay in src/)`);
        continue;
      }
      const target = posix(relative(root, resolve(dirname(path), spec)));
      const targetModule = moduleOf(target);
      if (own !== undefined && targetModule !== own) {
        if (target.startsWith('config/'))
          report(`${own.dir}/ must not import config/: configuration comes in as options`);
        else if (targetModule !== undefined) {
          if (target !== `${targetModule.dir}/index.ts`)
            report(`${targetModule.dir}/ is imported only through ${targetModule.dir}/index.ts`);
        } else {
          const allowed = own.allowed.find((a) => a.file === target);
          if (allowed === undefined)
            report(
              `${own.dir}/ may import from outside only ${own.allowed.map((a) => a.file).join(', ')} and modules' index.ts`,
            );
          else if (allowed.typeOnly && !ref.typeOnly) report(`${own.dir}/ may import only types from ${target}`);
        }
      } else if (own === undefined && targetModule !== undefined && target !== `${targetModule.dir}/index.ts`) {
        report(`${targetModule.dir}/ is imported only through ${targetModule.dir}/index.ts`);
      }
      const internal = target.lastIndexOf('/internal/');
      if (internal !== -1 && !file.startsWith(`${target.slice(0, internal)}/`) && targetModule === undefined) {
        report(`${target.slice(0, internal)}/internal/ is private to ${target.slice(0, internal)}/`);
      }
      if (own !== undefined && file === `${own.dir}/index.ts` && target.startsWith(`${own.dir}/internal/`)) {
        report(`${own.dir}/index.ts must not re-export internal/ files: move what others use into a public file`);
      }
    }
  }
  return violations;
}
