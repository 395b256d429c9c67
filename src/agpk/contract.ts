import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

/** Folder of the published AGPK v1 contract files (served under /agpk/v1/). */
export const CONTRACT_DIR = fileURLToPath(new URL('../../config/agpk/v1/', import.meta.url));

/** The compiled AGPK v1 schemas. */
export interface AgpkSchemas {
  manifest: ValidateFunction;
  commands: ValidateFunction;
  /** Compiles a command's `input_schema`; throws with a readable message when it is not a schema. */
  compileInput(schema: unknown): ValidateFunction;
}

/** A JSON pointer (`/commands/0/id`) as a JSON path (`$.commands[0].id`). */
export function jsonPath(pointer: string): string {
  if (pointer === '') return '$';
  return `$${pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) =>
      /^\d+$/.test(seg) ? `[${seg}]` : /^[A-Za-z_$][\w$]*$/.test(seg) ? `.${seg}` : `[${JSON.stringify(seg)}]`,
    )
    .join('')}`;
}

/** One ajv error as `{path, message}` with the offending property folded into the path. */
export function describeAjvError(error: ErrorObject): { path: string; message: string } {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required')
    return {
      path: jsonPath(error.instancePath),
      message: `missing required property "${String(params.missingProperty)}"`,
    };
  if (error.keyword === 'const')
    return { path: jsonPath(error.instancePath), message: `must equal ${JSON.stringify(params.allowedValue)}` };
  if (error.keyword === 'additionalProperties')
    return {
      path: jsonPath(error.instancePath),
      message: `must NOT have additional property "${String(params.additionalProperty)}"`,
    };
  if (error.keyword === 'enum')
    return { path: jsonPath(error.instancePath), message: `must be one of ${JSON.stringify(params.allowedValues)}` };
  return { path: jsonPath(error.instancePath), message: error.message ?? 'is invalid' };
}

/** Loads and compiles the contract schemas from `dir` (default: config/agpk/v1). */
export function loadAgpkSchemas(dir: string = CONTRACT_DIR): AgpkSchemas {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const read = (name: string): object => JSON.parse(readFileSync(join(dir, name), 'utf8')) as object;
  const manifest = ajv.compile(read('schema.json'));
  const commands = ajv.compile(read('agent-commands.schema.json'));
  const inputs = new Ajv2020({ allErrors: true, strict: false });
  return {
    manifest,
    commands,
    compileInput(schema) {
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
        throw new Error('input_schema must be a JSON Schema object');
      const copy = { ...(schema as Record<string, unknown>) };
      // A package's own $id must not collide with another package's in the shared compiler.
      delete copy.$id;
      return inputs.compile(copy);
    },
  };
}
