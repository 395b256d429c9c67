import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { type AgpkSchemas, describeAjvError } from './contract.ts';
import { DIGESTS_FILE, MANIFEST_FILE, parseDigests, walkTree } from './digests.ts';
import type { Problem } from './errors.ts';
import { type AgentCommand, type AgentCommands, type AgpkManifest, EDGE_REQUIRED_COMMANDS, providesCommand, RUNNABLE_DRIVER_KINDS, USAGE_FILES } from './manifest.ts';
import { treeDigests } from './pack.ts';
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

async function kind(path: string): Promise<'file' | 'dir' | 'other' | 'missing'> {
  try {
    const st = await lstat(path);
    return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
  } catch {
    return 'missing';
  }
}

async function readJson(dir: string, file: string, problems: Problem[], missing: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(dir, file), 'utf8');
  } catch {
    problems.push({ file, path: '$', message: missing });
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    problems.push({ file, path: '$', message: `invalid JSON: ${(error as Error).message}` });
    return undefined;
  }
}

function checkEdge(manifest: AgpkManifest, commands: AgentCommand[], problems: Problem[]): void {
  const face = manifest.device_face;
  if (face === undefined || face === null || typeof face !== 'object') {
    problems.push({ file: MANIFEST_FILE, path: '$.device_face', message: 'edge package (capability_domain iot_edge) must declare device_face "agpk.device-face.v1"' });
  } else if (face.read !== true || face.write !== true) {
    problems.push({
      file: MANIFEST_FILE,
      path: face.read !== true ? '$.device_face.read' : '$.device_face.write',
      message: 'edge package must declare read and write: probing-only packages are forbidden',
    });
  }
  for (const name of EDGE_REQUIRED_COMMANDS) {
    if (!commands.some((c) => typeof c.id === 'string' && providesCommand(c.id, name))) {
      problems.push({ file: COMMANDS_FILE, path: '$.commands', message: `edge package is missing the required command "${name}"` });
    }
  }
}

async function checkCommands(dir: string, schemas: AgpkSchemas, value: unknown, problems: Problem[], warnings: Problem[]): Promise<AgentCommand[]> {
  if (!schemas.commands(value)) {
    for (const e of schemas.commands.errors ?? []) problems.push({ file: COMMANDS_FILE, ...describeAjvError(e) });
    return ((value as AgentCommands | undefined)?.commands ?? []).filter((c) => c && typeof c === 'object');
  }
  const commands = (value as AgentCommands).commands;
  const ids = new Set<string>();
  for (const [i, c] of commands.entries()) {
    if (ids.has(c.id)) problems.push({ file: COMMANDS_FILE, path: `$.commands[${i}].id`, message: `duplicate command id "${c.id}"` });
    ids.add(c.id);
    const entryKind = await kind(join(dir, c.driver.entry));
    if (entryKind !== 'file') problems.push({ file: COMMANDS_FILE, path: `$.commands[${i}].driver.entry`, message: `entry "${c.driver.entry}" is not a file in the package` });
    if (!(RUNNABLE_DRIVER_KINDS as readonly string[]).includes(c.driver.kind)) {
      warnings.push({ file: COMMANDS_FILE, path: `$.commands[${i}].driver.kind`, message: `driver kind "${c.driver.kind}" needs a host that supports it (this one runs ${RUNNABLE_DRIVER_KINDS.join(', ')})` });
    }
    try {
      schemas.compileInput(c.input_schema);
    } catch (error) {
      problems.push({ file: COMMANDS_FILE, path: `$.commands[${i}].input_schema`, message: `not a valid JSON Schema: ${(error as Error).message}` });
    }
  }
  return commands;
}

async function checkDigests(dir: string, problems: Problem[]): Promise<Buffer | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, DIGESTS_FILE));
  } catch {
    problems.push({ file: DIGESTS_FILE, path: '$', message: 'DIGESTS is missing (run `plaza agpk pack`)' });
    return undefined;
  }
  const { digests, errors } = parseDigests(bytes.toString('utf8'));
  for (const message of errors) problems.push({ file: DIGESTS_FILE, path: '$', message: `bad DIGESTS: ${message}` });
  let tree;
  try {
    tree = await walkTree(dir, (p) => p === DIGESTS_FILE);
  } catch (error) {
    problems.push({ file: '(package)', path: '$', message: (error as Error).message });
    return bytes;
  }
  const actual = await treeDigests(dir, tree);
  for (const [path, sha] of actual) {
    const listed = digests.get(path);
    if (listed === undefined) problems.push({ file: DIGESTS_FILE, path: '$', message: `bad DIGESTS: ${path} is not listed` });
    else if (listed !== sha) problems.push({ file: path, path: '$', message: `bad DIGESTS: sha256 mismatch for ${path} (DIGESTS ${listed}, file ${sha})` });
  }
  for (const path of digests.keys()) {
    if (!actual.has(path)) problems.push({ file: DIGESTS_FILE, path: '$', message: `bad DIGESTS: ${path} is listed but missing` });
  }
  return bytes;
}

/**
 * Validates a package folder against the AGPK v1 standard: manifest schema, command surface,
 * usage file, payload folder, lifecycle hooks, edge rules, DIGESTS and signature. Every problem
 * names its file and JSON path; the report is `ok` only when the package may be published.
 */
export async function validatePackageDir(dir: string, schemas: AgpkSchemas): Promise<ValidationReport> {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const manifestValue = await readJson(dir, MANIFEST_FILE, problems, 'agpk.json is missing');
  let manifest: AgpkManifest | undefined;
  if (manifestValue !== undefined) {
    if (schemas.manifest(manifestValue)) manifest = manifestValue as AgpkManifest;
    else for (const e of schemas.manifest.errors ?? []) problems.push({ file: MANIFEST_FILE, ...describeAjvError(e) });
  }
  const commandsValue = await readJson(dir, COMMANDS_FILE, problems, 'missing command surface: agent-commands.json is mandatory');
  const commands = commandsValue === undefined ? [] : await checkCommands(dir, schemas, commandsValue, problems, warnings);

  const usage = await Promise.all(USAGE_FILES.map((f) => kind(join(dir, f))));
  if (!usage.includes('file')) problems.push({ file: USAGE_FILES.join(' or '), path: '$', message: 'missing usage file: USAGE.md or AGENT_CAPABILITIES.md is mandatory' });
  if ((await kind(join(dir, 'payload'))) !== 'dir') problems.push({ file: 'payload/', path: '$', message: 'missing payload/ folder' });

  if (manifest) {
    for (const hook of ['install', 'upgrade', 'uninstall'] as const) {
      const file = manifest.lifecycle?.[hook];
      if (file !== undefined && (await kind(join(dir, file))) !== 'file') {
        problems.push({ file: MANIFEST_FILE, path: `$.lifecycle.${hook}`, message: `hook file "${file}" is not in the package` });
      }
    }
    if (manifest.capability_domain === 'iot_edge' || manifest.device_face !== undefined) checkEdge(manifest, commands, problems);
    if (manifest.ahcp?.badge === 'full' && (await kind(join(dir, 'surface.json'))) !== 'file') {
      problems.push({ file: MANIFEST_FILE, path: '$.ahcp.badge', message: 'the Full badge requires surface.json' });
    }
  }
  if ((await kind(join(dir, 'surface.json'))) === 'file') await readJson(dir, 'surface.json', problems, '');

  const digests = await checkDigests(dir, problems);
  const signed = manifest?.ahcp?.signed === true;
  let kid: string | null = null;
  if (manifest && signed) {
    const signature = manifest.ahcp?.signature;
    if (typeof signature !== 'string' || signature === '') {
      problems.push({ file: MANIFEST_FILE, path: '$.ahcp.signature', message: 'ahcp.signed is true but ahcp.signature is missing' });
    } else if (digests) {
      const check = await checkSignature(digests, signature);
      if (check.valid) kid = check.kid;
      else problems.push({ file: MANIFEST_FILE, path: '$.ahcp.signature', message: `bad signature: does not verify over DIGESTS (${check.reason ?? 'invalid'})` });
    }
  } else if (manifest) {
    warnings.push({ file: MANIFEST_FILE, path: '$.ahcp.signed', message: 'unsigned package: installing it needs an explicit -y from the human' });
  }
  return {
    ok: problems.length === 0,
    package_id: manifest?.id ?? null,
    version: manifest?.version ?? null,
    signed,
    signature_kid: kid,
    problems,
    warnings,
    ...(manifest ? { manifest } : {}),
    commands,
  };
}
