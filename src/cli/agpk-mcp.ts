/**
 * `plaza agpk mcp`: a stdio MCP server with `agpk.invoke` and `agpk.list_commands` over the local
 * registry (AGPK_HOME) of the machine it runs on — the agent's own, where its packages are
 * installed; the Plaza server has none of them. An MCP client starts it as it starts any stdio
 * server (docs/agpk.md). Loaded only by that command.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import type { AgpkTools } from '../agpk/index.ts';

const INSTRUCTIONS =
  'Runs the commands of the AGPK packages installed on this machine. Call agpk.list_commands for the command ids and their input schemas, then agpk.invoke. ' +
  'Installing, upgrading and removing packages needs a human (plaza agpk install/upgrade/remove on the command line), not this server.';

/**
 * Serves `tools` on stdin/stdout; resolves when the client ends the session by closing stdin.
 * Calls still running then finish and are answered (each within its command's timeout) before the
 * process ends on its own. When it exits otherwise — SIGTERM from a client that stops waiting,
 * SIGINT, a client gone (stdout EPIPE) — the commands still running are killed with it: each runs
 * in a process group of its own, which no signal sent to this process reaches.
 */
export async function serveAgpkMcp(tools: AgpkTools, options: { version: string; home: string }): Promise<void> {
  const stopping = new AbortController();
  // Aborting kills each running command's process group synchronously, as 'exit' requires.
  process.once('exit', () => stopping.abort());
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    process.once(signal, () => process.exit(code));

  const server = new Server(
    { name: 'plaza-agpk', version: options.version },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  server.onerror = (error) => process.stderr.write(`plaza agpk mcp: ${error.message}\n`);
  // Fixed tools: the installed commands are what agpk.list_commands reads, per call (no list to change).
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.list() }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    // An unknown tool is a protocol error (MCP tools spec); everything past this is answered in-band.
    // Thrown with a code rather than as McpError, whose message would repeat the code.
    if (!tools.has(name))
      throw Object.assign(
        new Error(
          `Unknown tool: ${name} (this server has ${tools
            .list()
            .map((t) => t.name)
            .join(', ')})`,
        ),
        { code: ErrorCode.InvalidParams },
      );
    // The client's notifications/cancelled aborts extra.signal: the command is stopped, not left running.
    return tools.call(name, request.params.arguments, { signal: AbortSignal.any([extra.signal, stopping.signal]) });
  });

  // The client ends the session by closing stdin. The transport is not closed then: closing it
  // would abort the calls still running (the SDK aborts every open request on close). They finish,
  // their answers are written, and the process ends on its own once nothing is left to do.
  const ended = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  await server.connect(new StdioServerTransport());
  process.stderr.write(
    `plaza agpk mcp: serving agpk.invoke and agpk.list_commands for the packages in ${options.home}\n`,
  );
  await ended;
}
