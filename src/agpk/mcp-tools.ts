/**
 * The AGPK tools an MCP client calls on the agent's own machine, where the packages are installed
 * (`plaza agpk mcp`, src/cli/agpk-mcp.ts): `agpk.invoke`, the tool alias of `invoke` (spec §4.4),
 * and `agpk.list_commands`. Neither installs, upgrades or removes anything: those need a human's
 * approval (§3.4) and stay on the command line.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { AgpkError } from './errors.ts';
import { invokeCommand, type InvokeDeps, type InvokeResult, listCommands } from './invoke.ts';

/** The tool names (MCP 2025-11-25: 1–128 of A–Z a–z 0–9 _ - .). */
const AGPK_TOOL_NAMES = { invoke: 'agpk.invoke', listCommands: 'agpk.list_commands' } as const;

/** Arguments of `agpk.invoke`. */
const InvokeToolInputSchema = z.strictObject({
  command_id: z.string().min(1).describe('the id of an installed command, as agpk.list_commands shows it'),
  args: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("the command's arguments: a JSON object matching its input_schema (default {})"),
});

/** Arguments of `agpk.list_commands`. */
const ListCommandsToolInputSchema = z.strictObject({
  package_id: z.string().min(1).optional().describe('only the commands of this installed package'),
});

/** What `agpk.list_commands` answers (kept loose: packages may add fields to their commands). */
const LIST_OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    commands: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          package_id: { type: 'string' },
          package_version: { type: 'string' },
          summary: { type: 'string' },
          input_schema: { type: 'object' },
        },
        required: ['id', 'package_id', 'package_version', 'input_schema'],
      },
    },
  },
  required: ['commands'],
} as const;

/** The AGPK tools over one local registry. */
export interface AgpkTools {
  /** The tools as `tools/list` answers them (fixed: the installed commands are data, read per call). */
  list(): Tool[];
  /** Whether `name` is one of them. */
  has(name: string): boolean;
  /**
   * Runs one of them. Every failure — arguments, an unknown or tampered command, a command that
   * failed or timed out, an unreadable registry — comes back in-band (`isError`), never thrown.
   * `signal` stops a running command (its whole process group).
   */
  call(
    name: string,
    args: Record<string, unknown> | undefined,
    options?: { signal?: AbortSignal },
  ): Promise<CallToolResult>;
}

/** How much of a failed command's output its error text shows. */
const SHOWN_OUTPUT_CHARS = 8192;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
const failure = (text: string, structured?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text }],
  ...(structured ? { structuredContent: structured } : {}),
  isError: true,
});

function parseArgs<T extends z.ZodType>(
  tool: string,
  schema: T,
  args: unknown,
): { ok: true; value: z.infer<T> } | { ok: false; result: CallToolResult } {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.map(
    (i) =>
      `${i.path.map(String).join('.') || '(arguments)'}: ${i.code === 'unrecognized_keys' ? `unknown field(s) ${i.keys.join(', ')}` : i.message}`,
  );
  return { ok: false, result: failure(`invalid arguments for ${tool}: ${issues.join('; ')}`) };
}

/**
 * A command that ran: its output as text (and as `structuredContent` when it is a JSON object);
 * one that failed or timed out is an error naming how it ended, with its stderr and output.
 */
function invokeResult(r: InvokeResult): CallToolResult {
  if (r.ok)
    return {
      content: [{ type: 'text', text: asText(r.output) }],
      ...(isObject(r.output) ? { structuredContent: r.output } : {}),
    };
  const how = r.timed_out
    ? `timed out and was stopped after ${r.duration_ms} ms`
    : r.exit_code === null
      ? 'was stopped by a signal'
      : `failed with exit code ${r.exit_code}`;
  // stderr is already its last 8 KiB; the output's start is shown as much (it is whole in structuredContent).
  const output = asText(r.output).trimEnd();
  const shown = output.length > SHOWN_OUTPUT_CHARS ? `${output.slice(0, SHOWN_OUTPUT_CHARS)}…` : output;
  const text = [
    `${r.command_id} (${r.package_id}) ${how}`,
    ...(r.stderr.trim() ? [`stderr:\n${r.stderr.trimEnd()}`] : []),
    ...(shown.trim() ? [`output:\n${shown}`] : []),
  ];
  return failure(text.join('\n'), { ...r });
}

/** `agpk.invoke` and `agpk.list_commands` over `deps.registry`, which each call reads afresh. */
export function createAgpkTools(deps: InvokeDeps): AgpkTools {
  const tools: Tool[] = [
    {
      name: AGPK_TOOL_NAMES.invoke,
      title: 'Run an installed AGPK command',
      description:
        "Runs a command of an AGPK package installed on this machine (plaza agpk invoke). args must match the command's input_schema (see agpk.list_commands); a package whose installed files changed since install is refused. Returns the command's output; a command that fails or times out is an error with its stderr.",
      inputSchema: z.toJSONSchema(InvokeToolInputSchema, { io: 'input' }) as Tool['inputSchema'],
      // A package's command may change things, locally or elsewhere: nothing is promised.
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    {
      name: AGPK_TOOL_NAMES.listCommands,
      title: 'List installed AGPK commands',
      description:
        'Lists the commands of the AGPK packages installed on this machine (plaza agpk list-commands): id, package, summary and the input_schema agpk.invoke checks args against.',
      inputSchema: z.toJSONSchema(ListCommandsToolInputSchema, { io: 'input' }) as Tool['inputSchema'],
      outputSchema: LIST_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
  ];
  const names = new Set(tools.map((t) => t.name));

  async function run(
    name: string,
    args: Record<string, unknown> | undefined,
    signal: AbortSignal | undefined,
  ): Promise<CallToolResult> {
    if (name === AGPK_TOOL_NAMES.listCommands) {
      const input = parseArgs(name, ListCommandsToolInputSchema, args);
      if (!input.ok) return input.result;
      const result = { commands: await listCommands(deps.registry, input.value.package_id) };
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    }
    if (name !== AGPK_TOOL_NAMES.invoke) return failure(`unknown tool ${name}`);
    const input = parseArgs(name, InvokeToolInputSchema, args);
    if (!input.ok) return input.result;
    return invokeResult(
      await invokeCommand(deps, input.value.command_id, input.value.args ?? {}, signal ? { signal } : {}),
    );
  }

  return {
    list: () => tools,
    has: (name) => names.has(name),
    async call(name, args, options = {}) {
      try {
        return await run(name, args, options.signal);
      } catch (error) {
        // The same refusals, in the same words, as `plaza agpk invoke` / `list-commands`; invoke's also
        // as their --json error. Not list_commands': clients check any structuredContent of a tool
        // with an outputSchema against it, errors included (the MCP SDK's client does).
        if (error instanceof AgpkError)
          return failure(
            error.message,
            name === AGPK_TOOL_NAMES.invoke
              ? { error: { code: error.code, message: error.message, problems: error.problems } }
              : undefined,
          );
        return failure(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}
