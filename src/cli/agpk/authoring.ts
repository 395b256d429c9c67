/**
 * Package authoring: `scaffold`, `pack` and `validate`, which work on a package folder or archive
 * without a Plaza home or market.
 * Split from agpk.ts so that each group of `plaza agpk` subcommands reads on its own.
 */
import type { Command } from 'commander';

import { EXIT, jsonOption, out, run } from '../agpk-support.ts';
import { checkPublishable, notPublishable, reportLines } from './publishable.ts';

/** Adds `scaffold`, `pack` and `validate` to the `agpk` group. */
export function registerAuthoringCommands(agpk: Command): void {
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
        out(
          !!o.json,
          { ok: true, ...result },
          () =>
            `scaffolded ${o.id} ${o.version} in ${dir}\n` +
            `  LICENSE is the MIT license: put your name on its copyright line, or replace it with the license you choose`,
        );
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
        // market would refuse (its problems, or a high finding of the market's scan) is a failure
        // here too, with the same problems and findings named.
        const report = await checkPublishable(a, r.archive);
        const { ok, problems, warnings, findings } = report;
        out(!!o.json, { ok, ...r, problems, warnings, findings }, () =>
          [
            `${r.archive}\nsha256 ${r.sha256}  (${r.bytes} bytes, ${r.entries} entries)`,
            ...(ok ? [] : [`not publishable: ${notPublishable(report)}`]),
            ...reportLines(report),
          ].join('\n'),
        );
        return ok ? EXIT.ok : EXIT.failure;
      }),
    );

  agpk
    .command('validate <target>')
    .description(
      "check a package folder or archive, with the market's scan; exit 0 only when publishable (no problem, no high finding)",
    )
    .addOption(jsonOption())
    .action((target: string, o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await checkPublishable(a, target);
        out(!!o.json, r, () =>
          [
            r.ok
              ? `valid: ${r.package_id ?? '?'} ${r.version ?? '?'}${r.sha256 ? ` sha256 ${r.sha256}` : ''}`
              : `invalid: ${notPublishable(r)}`,
            ...reportLines(r),
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
}
