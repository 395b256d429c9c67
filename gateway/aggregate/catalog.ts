/** What `/mcp` serves from: the catalog of online tools, and providers served in this process. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import type { AgentIdentity } from '../identity/agin-card.ts';
import type { Connector } from '../passthrough/exchange.ts';

/** Separator between provider and tool in aggregated tool names. */
export const TOOL_NAME_SEPARATOR = '__';

/** A tool of an online connector, as the catalog stores it. */
export interface CatalogTool {
  provider: string;
  name: string;
  /** MCP's display name, when the provider published one. */
  title?: string | null;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The JSON Schema of a call's `structuredContent`, when published: clients check results against it. */
  outputSchema?: Record<string, unknown> | null;
  annotations: Record<string, unknown>;
  /** MCP's `execution` (`taskSupport`), when published. */
  execution?: Record<string, unknown> | null;
  /** MCP's `icons`, as the probe kept them (safe sources only, bounded). */
  icons?: { src: string; mimeType?: string; sizes?: string[]; theme?: 'light' | 'dark' }[] | null;
  /** MCP's `_meta` of the tool, as the probe kept it. */
  meta?: Record<string, unknown> | null;
}

/** An online connector as `/mcp` routes to it. */
export interface CatalogConnector extends Connector {
  /**
   * Its tools that run only as tasks (`execution.taskSupport` "required"): `/mcp`, which relays no
   * tasks, neither lists nor calls them. Absent: none.
   */
  taskOnlyTools?: ReadonlySet<string>;
  /** The revisions the connector offers, newest first, as the probe recorded them (absent: not recorded). */
  protocolVersions?: readonly string[] | undefined;
  /** The connector's MCP capabilities as the probe saw them (absent: not recorded). */
  capabilities?: Readonly<Record<string, unknown>> | undefined;
}

/** What the aggregated endpoint reads: online tools, and connectors by provider. */
export interface ToolCatalog {
  onlineTools(): Promise<CatalogTool[]>;
  byProvider(provider: string): Promise<CatalogConnector | undefined>;
  /**
   * Whether `provider` has no online endpoint but one that serves only callers with a credential
   * of their own (`auth_required`): its tools are unknown to Plaza, so none is on `/mcp`, and
   * `/mcp/p/<provider>` reaches it for a caller who brings the credential.
   */
  needsCredential(provider: string): Promise<boolean>;
  /**
   * Every online connector with its capabilities (resources/prompts lists fan out to those that
   * declare them). Absent: `/mcp` lists no resources or prompts.
   */
  onlineConnectors?(): Promise<CatalogConnector[]>;
}

/** Whether a tool runs only as a task (MCP `execution.taskSupport` "required"). */
export function runsOnlyAsTask(tool: CatalogTool): boolean {
  return tool.execution?.['taskSupport'] === 'required';
}

/**
 * A provider served inside this process (Plaza's own `platform` tools): listed with the online
 * tools and called directly instead of through an upstream session; receipts as for any call.
 */
export interface LocalProvider {
  provider: string;
  tools(): CatalogTool[];
  call(identity: AgentIdentity, tool: string, args: unknown, callId: string): Promise<CallToolResult>;
}

/** The tools `/mcp` lists: the local provider's and the online ones, as `<provider>__<tool>`. */
export async function listedTools(local: LocalProvider | undefined, catalog: ToolCatalog) {
  // Tools that run only as tasks stay off: /mcp relays no tasks (they work on /mcp/p/<provider>).
  return [...(local?.tools() ?? []), ...(await catalog.onlineTools()).filter((t) => !runsOnlyAsTask(t))].map((t) => ({
    name: `${t.provider}${TOOL_NAME_SEPARATOR}${t.name}`,
    ...(t.title ? { title: t.title } : {}),
    description: t.description,
    inputSchema: { type: 'object', ...t.inputSchema } as { type: 'object' },
    // As published (the probe kept it only in MCP's shape): the agent's client checks each call's structuredContent against it.
    ...(t.outputSchema ? { outputSchema: t.outputSchema as { type: 'object' } } : {}),
    annotations: t.annotations,
    ...(t.execution ? { execution: t.execution } : {}),
    ...(t.icons ? { icons: t.icons } : {}),
    ...(t.meta ? { _meta: t.meta } : {}),
  }));
}
