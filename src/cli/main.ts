import { readFileSync } from 'node:fs';

import { Command, CommanderError } from 'commander';

import { type Config, ConfigError, loadConfig } from '../../config/index.ts';

/** Exit codes of the `plaza` command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function configOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`plaza: ${error.message}\n`);
      process.exit(EXIT.usage);
    }
    throw error;
  }
}

/**
 * The `plaza` command line. Application modules are imported lazily, after telemetry is set up,
 * so OpenTelemetry's ESM hook sees them load.
 */
export async function main(argv: string[], env: Record<string, string | undefined>): Promise<void> {
  // `plaza outbox list | head`: a reader that stops reading ends a command quietly, as it does any
  // Unix tool; a server whose log reader went away keeps serving.
  // (argv is process.argv: the command is its third element.)
  const serving = argv[2] === 'serve';
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (!serving) process.exit(EXIT.ok);
  });
  const program = new Command('plaza')
    .description('Plaza: MCP gateway and agent marketplace')
    .version(version(), '-v, --version')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description('run the Plaza server (embedded storage unless DATABASE_URL is set)')
    .action(async () => {
      const config = configOrExit(env);
      const telemetry = config.telemetry.enabled
        ? await (await import('../telemetry/index.ts')).startTelemetry(config.telemetry)
        : undefined;
      const { serve } = await import('./serve.ts');
      await serve(config, telemetry);
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const { runMigrate } = await import('./commands.ts');
      await runMigrate(configOrExit(env));
    });

  const accounts = program.command('accounts').description('manage accounts');
  accounts
    .command('create')
    .description('create an account; prints {account_id, api_key} (the key is shown once)')
    .requiredOption('--email <email>', 'the account e-mail')
    .option('--name <name>', 'a display name')
    .action(async (options: { email: string; name?: string }) => {
      const { createAccount } = await import('./commands.ts');
      await createAccount(configOrExit(env), options);
    });

  (await import('./agpk.ts')).registerAgpkCommands(program, env);
  (await import('./mcp-bridge.ts')).registerAgentCommands(program, env);
  (await import('./agents-policy.ts')).registerAgentPolicyCommands(program, env);
  (await import('./receipts.ts')).registerReceiptsCommands(program, env);
  (await import('./outbox.ts')).registerOutboxCommands(program, env);

  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
    throw error;
  }
}
