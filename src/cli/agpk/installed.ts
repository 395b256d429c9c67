/**
 * Installed packages: `list`, `list-commands`, `invoke`, `mcp` and `verify`, which read or run
 * what is installed and change nothing.
 * Split from agpk.ts so that each group of `plaza agpk` subcommands reads on its own.
 */
import type { Command } from 'commander';

import { context, type Env, EXIT, jsonOption, out, parseArgs, run, UsageError } from '../agpk-support.ts';

/** Adds `list`, `list-commands`, `invoke`, `mcp` and `verify` to the `agpk` group. */
export function registerInstalledCommands(agpk: Command, env: Env): void {
  agpk
    .command('list')
    .description('list installed packages')
    .addOption(jsonOption())
    .action((o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const { packages } = await context(a, env, { json: !!o.json }).registry.read();
        const rows = Object.values(packages)
          .sort((x, y) => x.package_id.localeCompare(y.package_id))
          .map((p) => ({
            package_id: p.package_id,
            name: p.name,
            version: p.version,
            signed: p.signature.signed,
            trusted: p.signature.trusted,
            source: p.source,
            installed_at: p.installed_at,
            install_dir: p.install_dir,
            commands: p.commands.length,
          }));
        out(!!o.json, { ok: true, packages: rows }, () =>
          rows.length === 0
            ? 'no packages installed'
            : rows.map((p) => `${p.package_id}  ${p.version}  ${p.name}`).join('\n'),
        );
      }),
    );

  agpk
    .command('list-commands')
    .description('list installed commands')
    .option('--package-id <id>', 'only this package')
    .addOption(jsonOption())
    .action((o: { packageId?: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const commands = await a.listCommands(context(a, env, { json: !!o.json }).registry, o.packageId);
        out(!!o.json, { ok: true, commands }, () =>
          commands.length === 0
            ? 'no commands'
            : commands.map((c) => `${c.id}  (${c.package_id}, ${c.driver.kind})  ${c.summary ?? ''}`).join('\n'),
        );
      }),
    );

  agpk
    .command('invoke <command_id>')
    .description('run an installed command; prints its result as JSON')
    .option('--args <json>', 'arguments (a JSON object)', '{}')
    .option('--timeout-ms <ms>', 'override the command timeout')
    .addOption(jsonOption())
    .action((id: string, o: { args: string; timeoutMs?: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const timeout = o.timeoutMs === undefined ? undefined : Number(o.timeoutMs);
        if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0))
          throw new UsageError('--timeout-ms must be a positive integer');
        const ctx = context(a, env, { json: true });
        const r = await a.invokeCommand(
          ctx,
          id,
          parseArgs(o.args),
          timeout === undefined ? {} : { timeoutMs: timeout },
        );
        process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
        return r.ok ? EXIT.ok : EXIT.failure;
      }),
    );

  agpk
    .command('mcp')
    .description(
      'serve agpk.invoke and agpk.list_commands to an MCP client over stdio (runs installed commands; installs nothing)',
    )
    .action(() =>
      // Errors go to stderr: stdout carries the protocol.
      run(false, async (a) => {
        const ctx = context(a, env, { json: true });
        const { serveAgpkMcp } = await import('../agpk-mcp.ts');
        await serveAgpkMcp(a.createAgpkTools(ctx), { version: ctx.hostVersion, home: ctx.registry.home });
      }),
    );

  agpk
    .command('verify [package_id]')
    .description('re-hash installed files; reports changed and missing files')
    .addOption(jsonOption())
    .action((id: string | undefined, o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const results = await a.verifyInstalled(context(a, env, { json: !!o.json }).registry, id);
        const ok = results.every((r) => r.ok);
        out(
          !!o.json,
          { ok, packages: results },
          () =>
            results
              .map((r) =>
                r.ok
                  ? `ok       ${r.package_id} ${r.version} (${r.checked} files)`
                  : `MODIFIED ${r.package_id} ${r.version}${r.changed.map((f) => `\n  changed ${f}`).join('')}${r.missing.map((f) => `\n  missing ${f}`).join('')}`,
              )
              .join('\n') || 'no packages installed',
        );
        return ok ? EXIT.ok : EXIT.failure;
      }),
    );
}
