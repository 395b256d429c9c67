import { join } from 'node:path';

import type { AgpkSchemas } from './contract.ts';
import { describeAjvError } from './contract.ts';
import { AgpkError } from './errors.ts';
import { installedChanges } from './installed-files.ts';
import { childEnv, runProcess } from './internal/run.ts';
import type { AgentCommand } from './manifest.ts';
import type { InstalledPackage, Registry } from './registry.ts';

/** What `invokeCommand` needs. */
export interface InvokeDeps {
  registry: Registry;
  schemas: AgpkSchemas;
  /** PATH, HOME… handed to the command. */
  baseEnv: Record<string, string | undefined>;
}

/** The JSON result of an invocation. */
export interface InvokeResult {
  command_id: string;
  package_id: string;
  ok: boolean;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  /** stdout parsed as JSON when the command's output is json and it parses, else the text. */
  output: unknown;
  stderr: string;
}

/** One installed command with the package that provides it. */
export interface ListedCommand extends AgentCommand {
  package_id: string;
  package_version: string;
}

/** Lists installed commands from the registry (no rebuild, spec §3.4), optionally for one package. */
export async function listCommands(registry: Registry, packageId?: string): Promise<ListedCommand[]> {
  const { packages } = await registry.read();
  if (packageId !== undefined && !packages[packageId])
    throw new AgpkError('not_found', `${packageId} is not installed`);
  return Object.values(packages)
    .filter((p) => packageId === undefined || p.package_id === packageId)
    .flatMap((p) => p.commands.map((c) => ({ ...c, package_id: p.package_id, package_version: p.version })))
    .sort((a, b) => a.id.localeCompare(b.id));
}

function launcher(pkg: InstalledPackage, command: AgentCommand): { file: string; args: string[] } {
  const entry = join(pkg.install_dir, command.driver.entry);
  const extra = command.driver.args ?? [];
  switch (command.driver.kind) {
    case 'node':
      return { file: process.execPath, args: [entry, ...extra] };
    case 'script':
      return { file: '/bin/sh', args: [entry, ...extra] };
    case 'process':
      return { file: entry, args: extra };
    default:
      throw new AgpkError(
        'bad_request',
        `driver kind "${command.driver.kind}" of ${command.id} is not supported by this host (process, script, node)`,
      );
  }
}

/**
 * Runs an installed command (spec §4.4 `invoke`, also the MCP tool `agpk.invoke`): checks `args`
 * against the command's input schema, refuses (`conflict`, naming the files) when the package's
 * installed files differ from the digests recorded at install (see `installedChanges`), then
 * starts the driver with the JSON args on stdin and in AGPK_ARGS, in the package's install folder,
 * killed after its timeout, or at once when `signal` aborts (the MCP client cancelled the call, or
 * `plaza agpk mcp` is stopping). Never throws for a command that ran and failed: `ok` is false and
 * `exit_code`/`stderr` say why.
 */
export async function invokeCommand(
  deps: InvokeDeps,
  commandId: string,
  args: unknown,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<InvokeResult> {
  const { packages } = await deps.registry.read();
  const pkg = Object.values(packages).find((p) => p.commands.some((c) => c.id === commandId));
  const command = pkg?.commands.find((c) => c.id === commandId);
  if (!pkg || !command)
    throw new AgpkError('not_found', `unknown command id "${commandId}" (see \`plaza agpk list-commands\`)`);
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    throw new AgpkError('bad_request', '--args must be a JSON object');
  const validate = deps.schemas.compileInput(command.input_schema);
  if (!validate(args)) {
    const problems = (validate.errors ?? []).map((e) => ({ file: '--args', ...describeAjvError(e) }));
    throw new AgpkError(
      'bad_request',
      `arguments do not match the input schema of ${commandId}: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      { problems },
    );
  }
  // Never run code that is not what was installed (`plaza agpk verify` would say MODIFIED).
  const { changed, missing } = await installedChanges(pkg, [command.driver.entry]);
  if (changed.length > 0 || missing.length > 0) {
    const what = [...changed.map((f) => `changed ${f}`), ...missing.map((f) => `missing ${f}`)];
    throw new AgpkError(
      'conflict',
      `refused: ${pkg.package_id} ${pkg.version} was changed after install (${what.slice(0, 5).join(', ')}${what.length > 5 ? `, and ${what.length - 5} more` : ''}); see \`plaza agpk verify ${pkg.package_id}\`, and repair with \`plaza agpk remove ${pkg.package_id} --approve\`, then install again`,
    );
  }
  const { file, args: argv } = launcher(pkg, command);
  const json = JSON.stringify(args);
  const timeoutMs = options.timeoutMs ?? command.timeout_ms ?? 60_000;
  const env = childEnv(deps.baseEnv, {
    AGPK_ARGS: json,
    AGPK_COMMAND_ID: commandId,
    AGPK_PACKAGE_ID: pkg.package_id,
    AGPK_INSTALL_ROOT: pkg.install_dir,
  });
  const run = await runProcess(file, argv, {
    cwd: pkg.install_dir,
    env,
    input: json,
    timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  let output: unknown = run.stdout;
  if (command.output !== 'text') {
    try {
      output = JSON.parse(run.stdout) as unknown;
    } catch {
      output = run.stdout;
    }
  }
  return {
    command_id: commandId,
    package_id: pkg.package_id,
    ok: run.exitCode === 0 && !run.timedOut,
    exit_code: run.exitCode,
    timed_out: run.timedOut,
    duration_ms: run.durationMs,
    output,
    stderr: run.stderr.slice(-8192),
  };
}
