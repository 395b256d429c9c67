import { type AgpkSchemas, describeAjvError } from './contract.ts';
import { DIGESTS_FILE, MANIFEST_FILE, parseDigests } from './digests.ts';
import type { Problem } from './errors.ts';
import {
  type AgentCommand,
  type AgentCommands,
  type AgpkManifest,
  EDGE_REQUIRED_COMMANDS,
  providesCommand,
  RUNNABLE_DRIVER_KINDS,
  USAGE_FILES,
} from './manifest.ts';
import { checkNearMisses, knownFields } from './near-misses.ts';
import { folderView, type PackageView } from './package-view.ts';
import { checkSignature } from './signing.ts';

/** The file holding the command surface (spec §2.9). */
export const COMMANDS_FILE = 'agent-commands.json';

/** What `validate` found. `ok` is true only when the package is publishable (spec §4.4). */
export interface ValidationReport {
  ok: boolean;
  package_id: string | null;
  version: string | null;
  signed: boolean;
  /** Key id of a valid signature, null when unsigned or invalid. */
  signature_kid: string | null;
  problems: Problem[];
  warnings: Problem[];
  /** The parsed files, for callers that go on to install. */
  manifest?: AgpkManifest;
  commands?: AgentCommand[];
}

async function readJson(view: PackageView, file: string, problems: Problem[], missing: string): Promise<unknown> {
  const bytes = await view.read(file);
  if (bytes === undefined) {
    problems.push({ file, path: '$', message: missing });
    return undefined;
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (error) {
    problems.push({ file, path: '$', message: `invalid JSON: ${(error as Error).message}` });
    return undefined;
  }
}

function checkEdge(manifest: AgpkManifest, commands: AgentCommand[], problems: Problem[]): void {
  const face = manifest.device_face;
  if (face === undefined || face === null || typeof face !== 'object') {
    problems.push({
      file: MANIFEST_FILE,
      path: '$.device_face',
      message: 'edge package (capability_domain iot_edge) must declare device_face "agpk.device-face.v1"',
    });
  } else if (face.read !== true || face.write !== true) {
    problems.push({
      file: MANIFEST_FILE,
      path: face.read !== true ? '$.device_face.read' : '$.device_face.write',
      message: 'edge package must declare read and write: probing-only packages are forbidden',
    });
  }
  for (const name of EDGE_REQUIRED_COMMANDS) {
    if (!commands.some((c) => typeof c.id === 'string' && providesCommand(c.id, name))) {
      problems.push({
        file: COMMANDS_FILE,
        path: '$.commands',
        message: `edge package is missing the required command "${name}"`,
      });
    }
  }
}

async function checkCommands(
  view: PackageView,
  schemas: AgpkSchemas,
  value: unknown,
  problems: Problem[],
  warnings: Problem[],
): Promise<AgentCommand[]> {
  if (!schemas.commands(value)) {
    for (const e of schemas.commands.errors ?? []) problems.push({ file: COMMANDS_FILE, ...describeAjvError(e) });
    return ((value as AgentCommands | undefined)?.commands ?? []).filter((c) => c && typeof c === 'object');
  }
  const commands = (value as AgentCommands).commands;
  const ids = new Set<string>();
  for (const [i, c] of commands.entries()) {
    if (ids.has(c.id))
      problems.push({ file: COMMANDS_FILE, path: `$.commands[${i}].id`, message: `duplicate command id "${c.id}"` });
    ids.add(c.id);
    checkNearMisses(
      c,
      knownFields((schemas.commands.schema as { $defs?: Record<string, unknown> }).$defs?.['command']),
      COMMANDS_FILE,
      `$.commands[${i}]`,
      warnings,
    );
    const entryKind = await view.kind(c.driver.entry);
    if (entryKind !== 'file')
      problems.push({
        file: COMMANDS_FILE,
        path: `$.commands[${i}].driver.entry`,
        message: `entry "${c.driver.entry}" is not a file in the package`,
      });
    if (!(RUNNABLE_DRIVER_KINDS as readonly string[]).includes(c.driver.kind)) {
      warnings.push({
        file: COMMANDS_FILE,
        path: `$.commands[${i}].driver.kind`,
        message: `driver kind "${c.driver.kind}" needs a host that supports it (this one runs ${RUNNABLE_DRIVER_KINDS.join(', ')})`,
      });
    }
    try {
      schemas.compileInput(c.input_schema);
    } catch (error) {
      problems.push({
        file: COMMANDS_FILE,
        path: `$.commands[${i}].input_schema`,
        message: `not a valid JSON Schema: ${(error as Error).message}`,
      });
    }
  }
  return commands;
}

async function checkDigests(view: PackageView, problems: Problem[]): Promise<Buffer | undefined> {
  const bytes = await view.read(DIGESTS_FILE);
  if (bytes === undefined) {
    problems.push({ file: DIGESTS_FILE, path: '$', message: 'DIGESTS is missing (run `plaza agpk pack`)' });
    return undefined;
  }
  const { digests, errors } = parseDigests(bytes.toString('utf8'));
  for (const message of errors) problems.push({ file: DIGESTS_FILE, path: '$', message: `bad DIGESTS: ${message}` });
  let actual: Map<string, string>;
  try {
    actual = await view.digests();
  } catch (error) {
    problems.push({ file: '(package)', path: '$', message: (error as Error).message });
    return bytes;
  }
  for (const [path, sha] of actual) {
    const listed = digests.get(path);
    if (listed === undefined)
      problems.push({ file: DIGESTS_FILE, path: '$', message: `bad DIGESTS: ${path} is not listed` });
    else if (listed !== sha)
      problems.push({
        file: path,
        path: '$',
        message: `bad DIGESTS: sha256 mismatch for ${path} (DIGESTS ${listed}, file ${sha})`,
      });
  }
  for (const path of digests.keys()) {
    if (!actual.has(path))
      problems.push({ file: DIGESTS_FILE, path: '$', message: `bad DIGESTS: ${path} is listed but missing` });
  }
  return bytes;
}

/** `value` when it is a JSON object (not an array), else undefined. */
function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * Validates a package folder against the AGPK v1 standard: manifest schema, command surface,
 * usage file, payload folder, lifecycle hooks, edge rules, DIGESTS and signature. Every problem
 * names its file and JSON path; the report is `ok` only when the package may be published.
 */
export function validatePackageDir(dir: string, schemas: AgpkSchemas): Promise<ValidationReport> {
  return validatePackage(folderView(dir), schemas);
}

/** Validates a package as `validatePackageDir` does, read through a view (a folder or an archive). */
export async function validatePackage(view: PackageView, schemas: AgpkSchemas): Promise<ValidationReport> {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const manifestValue = await readJson(view, MANIFEST_FILE, problems, 'agpk.json is missing');
  let manifest: AgpkManifest | undefined;
  if (manifestValue !== undefined) {
    if (schemas.manifest(manifestValue)) manifest = manifestValue as AgpkManifest;
    else for (const e of schemas.manifest.errors ?? []) problems.push({ file: MANIFEST_FILE, ...describeAjvError(e) });
  }
  const commandsValue = await readJson(
    view,
    COMMANDS_FILE,
    problems,
    'missing command surface: agent-commands.json is mandatory',
  );
  const commands =
    commandsValue === undefined ? [] : await checkCommands(view, schemas, commandsValue, problems, warnings);

  const usage = await Promise.all(USAGE_FILES.map((f) => view.kind(f)));
  if (!usage.includes('file'))
    problems.push({
      file: USAGE_FILES.join(' or '),
      path: '$',
      message: 'missing usage file: USAGE.md or AGENT_CAPABILITIES.md is mandatory',
    });
  if ((await view.kind('payload')) !== 'dir')
    problems.push({ file: 'payload/', path: '$', message: 'missing payload/ folder' });

  if (manifest) {
    const schema = schemas.manifest.schema as { $defs?: Record<string, unknown> };
    checkNearMisses(manifest, knownFields(schema), MANIFEST_FILE, '$', warnings);
    checkNearMisses(
      manifest.lifecycle,
      knownFields(schema.$defs?.['lifecycle']),
      MANIFEST_FILE,
      '$.lifecycle',
      warnings,
    );
    for (const hook of ['install', 'upgrade', 'uninstall'] as const) {
      const file = manifest.lifecycle?.[hook];
      if (file !== undefined && (await view.kind(file)) !== 'file') {
        problems.push({
          file: MANIFEST_FILE,
          path: `$.lifecycle.${hook}`,
          message: `hook file "${file}" is not in the package`,
        });
      }
    }
    if (manifest.capability_domain === 'iot_edge' || manifest.device_face !== undefined)
      checkEdge(manifest, commands, problems);
    if (manifest.ahcp?.badge === 'full' && (await view.kind('surface.json')) !== 'file') {
      problems.push({ file: MANIFEST_FILE, path: '$.ahcp.badge', message: 'the Full badge requires surface.json' });
    }
  }
  if ((await view.kind('surface.json')) === 'file') await readJson(view, 'surface.json', problems, '');

  const digests = await checkDigests(view, problems);
  // A manifest the schema refuses still says which package it is and may carry a signature that
  // can be checked: both are reported, so a schema error does not hide a stale signature.
  const raw = asObject(manifestValue);
  const ahcp = asObject(raw?.['ahcp']);
  const signed = ahcp?.['signed'] === true;
  let kid: string | null = null;
  if (raw && signed) {
    const signature = ahcp?.['signature'];
    if (typeof signature !== 'string' || signature === '') {
      problems.push({
        file: MANIFEST_FILE,
        path: '$.ahcp.signature',
        message: 'ahcp.signed is true but ahcp.signature is missing',
      });
    } else if (digests) {
      const check = await checkSignature(digests, signature);
      if (check.valid) kid = check.kid;
      else
        problems.push({
          file: MANIFEST_FILE,
          path: '$.ahcp.signature',
          message: `bad signature: does not verify over DIGESTS (${check.reason ?? 'invalid'})`,
        });
    }
  } else if (manifest) {
    warnings.push({
      file: MANIFEST_FILE,
      path: '$.ahcp.signed',
      message: 'unsigned package: installing it needs an explicit -y from the human',
    });
  }
  return {
    ok: problems.length === 0,
    package_id: typeof raw?.['id'] === 'string' ? raw['id'] : null,
    version: typeof raw?.['version'] === 'string' ? raw['version'] : null,
    signed,
    signature_kid: kid,
    problems,
    warnings,
    ...(manifest ? { manifest } : {}),
    commands,
  };
}
