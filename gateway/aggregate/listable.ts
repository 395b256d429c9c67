/**
 * What `/mcp`'s tools/list shows an agent: the listed tools the authorize hook would let it call
 * (asked with method `tools/list`: rules only, nothing counted), so an agent restricted to two tools
 * sees those two (issue 35). Without a hook every tool is listed, as before.
 */
import type { Authorize } from '../call-pipeline.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { TOOL_NAME_SEPARATOR } from './catalog.ts';

/** A tool as `/mcp` lists it (`<provider>__<tool>`), with the annotations it was published with. */
interface ListedTool {
  name: string;
  annotations?: Readonly<Record<string, unknown>> | undefined;
}

/** The tools of `tools` that `authorize` lets `identity` call, in their order. */
export async function listableTools<T extends ListedTool>(
  tools: T[],
  identity: AgentIdentity,
  authorize: Authorize | undefined,
): Promise<T[]> {
  if (!authorize) return tools;
  const verdicts = await Promise.all(
    tools.map((t) => {
      const at = t.name.indexOf(TOOL_NAME_SEPARATOR);
      return authorize({
        identity,
        provider: t.name.slice(0, at),
        tool: t.name.slice(at + TOOL_NAME_SEPARATOR.length),
        method: 'tools/list',
        annotations: () => t.annotations,
      });
    }),
  );
  return tools.filter((_, i) => verdicts[i]!.allowed);
}
