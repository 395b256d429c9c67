/**
 * `plaza agpk …` (spec §4.4): the AGPK package tool and installer. Every command takes --json and
 * exits 0 on success, 1 on failure or refusal, 2 on usage errors. Application modules load lazily.
 */
import type { Command } from 'commander';

import {
  approval,
  collect,
  context,
  type Env,
  EXIT,
  interruptible,
  jsonOption,
  out,
  parseArgs,
  run,
  settings,
  UsageError,
} from './agpk-support.ts';

/** Adds the `agpk` command group to `program` (inheriting its exit and help settings). */
export function registerAgpkCommands(program: Command, env: Env): Command {
  // `scaffold --version <v>` (spec §4.4) must reach the subcommand, not plaza's own --version.
  program.enablePositionalOptions();
  const agpk = program.command('agpk').description('AGPK packages: build, validate, sign, install and run (spec §4.4)');

  agpk
    .command('scaffold <dir>')
    .description('create a package that validates as is')
    .requiredOption('--id <id>', 'package id')
    .requiredOption('--name <name>', 'package name')
    .requiredOption('--version <version>', 'package version')
    .addOption(jsonOption())
    .action((dir: string, o: { id: string; name: string; version: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const result = await a.scaffoldPackage(dir, o);
        out(!!o.json, { ok: true, ...result }, () => `scaffolded ${o.id} ${o.version} in ${dir}`);
      }),
    );

  agpk
    .command('pack <dir>')
    .description(
      'write DIGESTS and a deterministic .agpk archive; prints its sha256; exit 0 only when the archive validates',
    )
    .option('-o, --output <file>', 'archive path (default: <parent>/<id>-<version>.agpk)')
    .addOption(jsonOption())
    .action((dir: string, o: { output?: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await a.packPackage(dir, o.output ? { output: o.output } : {});
        // The archive is written either way (it can be inspected), but one that `validate` and the
        // market would refuse is a failure here too, with the same problems named.
        const { ok, problems, warnings } = await a.validateTarget(r.archive, a.loadAgpkSchemas());
        out(!!o.json, { ok, ...r, problems, warnings }, () =>
          [
            `${r.archive}\nsha256 ${r.sha256}  (${r.bytes} bytes, ${r.entries} entries)`,
            ...(ok ? [] : [`not publishable: ${problems.length} problem(s)`]),
            ...problems.map((p) => `  error   ${p.file} ${p.path}: ${p.message}`),
            ...warnings.map((p) => `  warning ${p.file} ${p.path}: ${p.message}`),
          ].join('\n'),
        );
        return ok ? EXIT.ok : EXIT.failure;
      }),
    );

  agpk
    .command('validate <target>')
    .description('check a package folder or archive; exit 0 only when publishable')
    .addOption(jsonOption())
    .action((target: string, o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await a.validateTarget(target, a.loadAgpkSchemas());
        out(!!o.json, r, () =>
          [
            r.ok
              ? `valid: ${r.package_id ?? '?'} ${r.version ?? '?'}${r.sha256 ? ` sha256 ${r.sha256}` : ''}`
              : `invalid: ${r.problems.length} problem(s)`,
            ...r.problems.map((p) => `  error   ${p.file} ${p.path}: ${p.message}`),
            ...r.warnings.map((p) => `  warning ${p.file} ${p.path}: ${p.message}`),
            // A folder edited since `pack` (or `scaffold`) wrote its DIGESTS: say how to refresh them.
            ...(r.sha256 === undefined && r.problems.some((p) => p.message.startsWith('bad DIGESTS: '))
              ? [
                  `  hint    files changed since DIGESTS was written: \`plaza agpk pack ${target}\` writes it anew (sign again before, if the package is signed), then validate the archive`,
                ]
              : []),
          ].join('\n'),
        );
        return r.ok ? EXIT.ok : EXIT.failure;
      }),
    );

  agpk
    .command('keygen <prefix>')
    .description('create an Ed25519 signing key: <prefix>.key.pem and <prefix>.pub.pem')
    .addOption(jsonOption())
    .action((prefix: string, o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await a.generateSigningKey(prefix);
        out(
          !!o.json,
          { ok: true, ...r },
          () => `private key ${r.privateKey}\npublic key  ${r.publicKey}\nkid ${r.kid}`,
        );
      }),
    );

  agpk
    .command('sign <target>')
    .description('sign DIGESTS with an Ed25519 key; records the JWS in ahcp.signature')
    .requiredOption('--key <file>', 'private key (PEM)')
    .addOption(jsonOption())
    .action((target: string, o: { key: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await a.signTarget(target, o.key);
        out(
          !!o.json,
          { ok: true, ...r },
          () => `signed (kid ${r.kid})${r.archive ? `\n${r.archive.path}\nsha256 ${r.archive.sha256}` : ''}`,
        );
      }),
    );

  agpk
    .command('verify-signature <target>')
    .description('check the signature of a package folder or archive against trusted keys')
    .option('--trust-key <file>', 'trusted public key (PEM), repeatable', collect)
    .addOption(jsonOption())
    .action((target: string, o: { trustKey?: string[]; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const ctx = context(a, env, { json: !!o.json, ...(o.trustKey ? { trustKey: o.trustKey } : {}) });
        const local = await import('node:fs/promises').then((fs) =>
          fs.readdir(ctx.registry.trustedKeysDir).catch(() => [] as string[]),
        );
        const trusted = await a.loadTrustedKeyIds([
          ...local.filter((n) => n.endsWith('.pem')).map((n) => `${ctx.registry.trustedKeysDir}/${n}`),
          ...(o.trustKey ?? []),
        ]);
        const r = await a.withPackageDir(target, async (dir) => {
          const { readFile } = await import('node:fs/promises');
          const manifest = await a.readManifest(dir);
          const signature = manifest.ahcp?.signature;
          if (manifest.ahcp?.signed !== true || typeof signature !== 'string')
            return { signed: false, valid: false, trusted: false, kid: null, reason: 'unsigned package' };
          const check = await a.checkSignature(
            await readFile(`${dir}/DIGESTS`).catch(() => Buffer.alloc(0)),
            signature,
          );
          return {
            signed: true,
            valid: check.valid,
            trusted: check.valid && check.kid !== null && trusted.has(check.kid),
            kid: check.kid,
            reason: check.reason ?? null,
          };
        });
        const ok = r.valid && r.trusted;
        out(!!o.json, { ok, ...r }, () =>
          ok
            ? `signature valid, trusted key ${r.kid ?? ''}`
            : `signature ${r.signed ? (r.valid ? `valid but key ${r.kid ?? ''} is not trusted` : `INVALID: ${r.reason ?? ''}`) : 'missing (unsigned package)'}`,
        );
        return ok ? EXIT.ok : EXIT.failure;
      }),
    );

  agpk
    .command('trust <public-key>')
    .description('trust an Ed25519 public key (PEM) for package signatures')
    .addOption(jsonOption())
    .action((file: string, o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const { mkdir, copyFile } = await import('node:fs/promises');
        const [kid] = [...(await a.loadTrustedKeyIds([file]))];
        const ctx = context(a, env, { json: !!o.json });
        await mkdir(ctx.registry.trustedKeysDir, { recursive: true });
        const dest = `${ctx.registry.trustedKeysDir}/${kid!}.pem`;
        await copyFile(file, dest);
        out(!!o.json, { ok: true, kid, path: dest }, () => `trusted ${kid!}`);
      }),
    );

  agpk
    .command('list-options')
    .description('search the market (metadata only)')
    .requiredOption('--query <text>', 'what you are looking for')
    .addOption(jsonOption())
    .action((o: { query: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const { shareUrl } = settings(env);
        const ranked = a.rankSources(await a.fetchMarketSources(shareUrl), o.query);
        out(!!o.json, { ok: true, query: o.query, options: ranked }, () =>
          ranked.length === 0
            ? 'no matches'
            : ranked.map((s) => `${s.package_id}  ${s.version}  ${s.name} — ${s.summary}`).join('\n'),
        );
      }),
    );

  const installLike = (name: string, description: string) =>
    agpk
      .command(name)
      .description(description)
      .option('--approve', 'the session is pre-approved (no prompt)')
      .option('-y, --yes', 'acknowledge installing a package without a trusted signature')
      .option('--trust-key <file>', 'trusted public key (PEM), repeatable', collect)
      .addOption(jsonOption());

  installLike('install <packages...>', 'install packages from archive files or the market (by package_id)').action(
    (refs: string[], o: { approve?: boolean; yes?: boolean; trustKey?: string[]; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await interruptible((signal) =>
          a.installPackages(
            context(a, env, { json: !!o.json, signal, ...(o.trustKey ? { trustKey: o.trustKey } : {}) }),
            refs,
            approval({ ...o, json: !!o.json }),
          ),
        );
        out(!!o.json, { ok: true, ...r }, () => r.message);
      }),
  );

  installLike('upgrade <package_id>', 'upgrade an installed package to the market version (or --file)')
    .option('--file <archive>', 'upgrade from this archive instead of the market')
    .action((id: string, o: { approve?: boolean; yes?: boolean; trustKey?: string[]; file?: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await interruptible((signal) =>
          a.upgradePackage(
            context(a, env, { json: !!o.json, signal, ...(o.trustKey ? { trustKey: o.trustKey } : {}) }),
            id,
            approval({ ...o, json: !!o.json }),
            o.file,
          ),
        );
        out(!!o.json, { ok: true, ...r }, () => r.message);
      }),
    );

  agpk
    .command('remove <package_id>')
    .description('uninstall a package (runs UNINSTALL; refused while others depend on it)')
    .option('--approve', 'the session is pre-approved (no prompt)')
    .option('--force', 'remove the package even when its UNINSTALL hook fails')
    .addOption(jsonOption())
    .action((id: string, o: { approve?: boolean; force?: boolean; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await interruptible((signal) =>
          a.removePackage(context(a, env, { json: !!o.json, signal }), id, approval({ ...o, json: !!o.json }), {
            force: !!o.force,
          }),
        );
        out(!!o.json, { ok: true, ...r }, () => r.message);
      }),
    );

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
        const { serveAgpkMcp } = await import('./agpk-mcp.ts');
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

  return agpk;
}
