import type { Command } from 'commander';

import { connect } from './mcp-bridge/connect.ts';
import { login, type LoginOptions } from './mcp-bridge/login.ts';
import type { ConnectOptions } from './mcp-bridge/target.ts';

/** `plaza agents login` and `plaza mcp connect`. */
export function registerAgentCommands(program: Command, env: Record<string, string | undefined>): void {
  const agents =
    program.commands.find((c) => c.name() === 'agents') ??
    program.command('agents').description('agent credentials for the gateway');
  agents
    .command('login')
    .description(
      'store an agent credential (file, mode 0600) for `plaza mcp connect`: an agent token, or sign in through the browser',
    )
    .option('--token <token>', 'the agent token from POST /api/agents')
    .option(
      '--browser',
      "sign in through the browser instead (MCP authorization): pick or create the agent on Plaza's consent page",
    )
    .option(
      '--provider <provider>',
      'with --browser: the provider `plaza mcp connect <provider>` bridges to (the sign-in is for its endpoint)',
    )
    .option('--all', 'with --browser: sign in for /mcp, which `plaza mcp connect --all` bridges to')
    .option('--no-open', 'with --browser: print the sign-in URL without opening a browser')
    .option('--url <url>', 'Plaza base URL', 'http://localhost:8080')
    .action((options: LoginOptions) => login(options, env));

  program
    .command('mcp')
    .description('MCP client helpers')
    .command('connect [provider]')
    .description('a stdio MCP server bridging to the gateway (/mcp/p/<provider>, or /mcp with --all)')
    .option('--all', 'bridge to the aggregated /mcp endpoint')
    .option('--upstream-token-env <NAME>', 'environment variable holding your third-party credential for the provider')
    .option('--upstream-provider <provider>', 'with --all: the one provider the credential is sent to')
    .option('--url <url>', 'override the stored Plaza base URL')
    .action((provider: string | undefined, options: ConnectOptions) => connect(provider, options, env));
}
