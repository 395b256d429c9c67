/**
 * Fingerprints of what `/mcp` lists, for the list-change watch (list-watch.ts): the tool list as
 * the catalog has it, and, for resources and prompts, which online connectors declare them (their
 * provider, endpoint and recorded capabilities) — the gathered lists gain or lose a provider's
 * items when that set changes. Reads only the catalog (cached there for a few seconds), never a
 * provider.
 */
import { hash } from 'node:crypto';

import { listedTools, type LocalProvider, type ToolCatalog } from './catalog.ts';

const digest = (value: unknown) => hash('sha256', JSON.stringify(value));

/** The three fingerprints (tools, resources, prompts) of what `/mcp` shows now. */
export async function listFingerprints(
  local: LocalProvider | undefined,
  catalog: ToolCatalog,
): Promise<{ tools: string; resources: string; prompts: string }> {
  const [tools, connectors] = await Promise.all([
    listedTools(local, catalog),
    catalog.onlineConnectors ? catalog.onlineConnectors() : Promise.resolve([]),
  ]);
  const declaring = (capability: string) =>
    connectors
      .filter((c) => c.capabilities?.[capability] !== undefined)
      .map((c) => [c.provider, c.endpointId, c.capabilities?.[capability]])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return { tools: digest(tools), resources: digest(declaring('resources')), prompts: digest(declaring('prompts')) };
}
