/**
 * The market and installation: `list-options` searches the market; `install`, `upgrade` and
 * `remove` change what is installed and ask for approval.
 * Split from agpk.ts so that each group of `plaza agpk` subcommands reads on its own.
 */
import type { Command } from 'commander';

import {
  approval,
  collect,
  context,
  type Env,
  interruptible,
  jsonOption,
  out,
  run,
  settings,
} from '../agpk-support.ts';

/** Adds `list-options`, `install`, `upgrade` and `remove` to the `agpk` group. */
export function registerInstallCommands(agpk: Command, env: Env): void {
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
}
