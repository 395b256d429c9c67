/**
 * The lists `/mcp` shows an agent: tools from the catalog, resources, resource templates and
 * prompts gathered from the connectors that declare them (fan-out) — each item under its
 * aggregate name (`<provider>__<name>`, `plaza+<provider>:<uri>`), and only those the authorize
 * hook lets this agent see (asked per item unless the hook allows everything).
 */
import type { CallPipeline } from '../call-pipeline.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { callAnswer } from '../internal/json-rpc.ts';
import { type CatalogTool, listedTools, type LocalProvider, TOOL_NAME_SEPARATOR, type ToolCatalog } from './catalog.ts';
import type { AskConnector, FanOut, GatheredList } from './fan-out.ts';
import type { RequestStates } from './request-state.ts';
import { aggregateUri } from './resource-uri.ts';
import type { RequestScope } from './scope.ts';
import { askUpstream, type UpstreamRequestDeps } from './upstream-request.ts';

/** What the lists use. */
export interface ListDeps extends UpstreamRequestDeps {
  catalog: ToolCatalog;
  local: LocalProvider | undefined;
  fanOut: FanOut;
  /** Whether the authorize hook is asked per item (false when it allows every call: nothing to filter). */
  authorizeEach: boolean;
  /** How an agent's multi-round-trip states are sealed; absent: no round trip crosses `/mcp`. */
  requestStates?: ((agentId: string) => RequestStates) | undefined;
}

/** Keeps the items `allowed` says yes to, asked all at once. */
async function filtered<T>(items: T[], allowed: (item: T) => Promise<boolean>): Promise<T[]> {
  const verdicts = await Promise.all(items.map(allowed));
  return items.filter((_, i) => verdicts[i]);
}

/** Whether the hook lets `identity` see `tool` of `provider` under `method`. */
async function mayList(
  pipeline: CallPipeline,
  identity: AgentIdentity,
  provider: string,
  method: 'tools/list' | 'resources/read' | 'prompts/get',
  tool: string,
  annotations?: Readonly<Record<string, unknown>>,
): Promise<boolean> {
  const authorization = await pipeline.authorize({
    identity,
    provider,
    method,
    tool,
    annotations: annotations ? () => annotations : undefined,
  });
  return authorization.allowed;
}

/** The tools this agent is shown (the catalog's, filtered by the hook). */
export async function toolsFor(deps: ListDeps, identity: AgentIdentity) {
  const tools = await listedTools(deps.local, deps.catalog);
  if (!deps.authorizeEach) return tools;
  return filtered(tools, (t) => {
    const split = t.name.indexOf(TOOL_NAME_SEPARATOR);
    return mayList(
      deps.pipeline,
      identity,
      t.name.slice(0, split),
      'tools/list',
      t.name.slice(split + TOOL_NAME_SEPARATOR.length),
      t.annotations as CatalogTool['annotations'],
    );
  });
}

/** Asks a connector for one page of a list, for the scope's agent. */
function asker(deps: ListDeps, scope: RequestScope): AskConnector {
  return async (connector, method, cursor, signal) => {
    const response = await askUpstream(deps, {
      identity: scope.identity,
      connector,
      req: scope.req,
      method,
      params: cursor === undefined ? {} : { cursor },
      signal,
      clientCapabilities: scope.clientCapabilities,
    });
    const answer = callAnswer(response, method);
    if (!('result' in answer)) throw new Error(`${connector.provider} did not list ${method}`);
    return answer.result;
  };
}

/** One gathered list, its items renamed to their aggregate names and filtered by the hook. */
export async function gatheredFor(deps: ListDeps, scope: RequestScope, method: GatheredList) {
  const items = await deps.fanOut.list(scope.identity, method, asker(deps, scope), deps.pipeline.clock.now());
  const shown = items.map(({ provider, item }) => {
    if (method === 'prompts/list') {
      const name = String(item['name']);
      return { provider, own: name, item: { ...item, name: `${provider}${TOOL_NAME_SEPARATOR}${name}` } };
    }
    const field = method === 'resources/list' ? 'uri' : 'uriTemplate';
    const uri = String(item[field]);
    return { provider, own: uri, item: { ...item, [field]: aggregateUri(provider, uri) } };
  });
  const visible = deps.authorizeEach
    ? await filtered(shown, (s) =>
        mayList(
          deps.pipeline,
          scope.identity,
          s.provider,
          method === 'prompts/list' ? 'prompts/get' : 'resources/read',
          s.own,
        ),
      )
    : shown;
  return visible.map((s) => s.item);
}
