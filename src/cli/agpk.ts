/**
 * `plaza agpk …` (spec §4.4): the AGPK package tool and installer. Every command takes --json and
 * exits 0 on success, 1 on failure or refusal, 2 on usage errors. Application modules load lazily.
 */
import type { Command } from 'commander';

import { registerAuthoringCommands } from './agpk/authoring.ts';
import { registerInstallCommands } from './agpk/install.ts';
import { registerInstalledCommands } from './agpk/installed.ts';
import { registerSigningCommands } from './agpk/signing.ts';
import type { Env } from './agpk-support.ts';

/** Adds the `agpk` command group to `program` (inheriting its exit and help settings). */
export function registerAgpkCommands(program: Command, env: Env): Command {
  // `scaffold --version <v>` (spec §4.4) must reach the subcommand, not plaza's own --version.
  program.enablePositionalOptions();
  const agpk = program.command('agpk').description('AGPK packages: build, validate, sign, install and run (spec §4.4)');

  // In this order: it is the order `plaza agpk --help` lists them in.
  registerAuthoringCommands(agpk);
  registerSigningCommands(agpk, env);
  registerInstallCommands(agpk, env);
  registerInstalledCommands(agpk, env);
  return agpk;
}
