/**
 * resources/read, prompts/get and completion/complete on `/mcp`: the aggregate name mapped back
 * to its provider, the authorize hook asked (reads and prompts), the request sent upstream with
 * the agent's card, the answer's URIs mapped to aggregate ones. A read and a prompt leave a
 * receipt like a call: provider, tool `resources/read` or `prompts/get`, and the URI or prompt
 * name at the head of its outcome (see docs/decisions/gateway.md, "Reads and prompts on /mcp are
 * receipted").
 */
import type { CallOutcome } from '../call-pipeline.ts';
import { callAnswer, STORAGE_UNAVAILABLE } from '../internal/json-rpc.ts';
import { MAX_TOOL_NAME_LENGTH } from '../receipt-sink.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import { cancelledBy } from './cancellation.ts';
import { type CatalogConnector, TOOL_NAME_SEPARATOR } from './catalog.ts';
import type { ListDeps } from './lists.ts';
import { relayTo } from './relay.ts';
import type { RequestStates } from './request-state.ts';
import { aggregateUri, providerUri } from './resource-uri.ts';
import { INVALID_PARAMS, type RequestScope, rpcFailure } from './scope.ts';
import { askUpstream } from './upstream-request.ts';

/** JSON-RPC code of an upstream failure (no usable answer) and of a refusal by Plaza. */
const INTERNAL_ERROR = -32603;
const INVALID_REQUEST = -32600;

type Params = Record<string, unknown> & { _meta?: Record<string, unknown> };

/** The connector of `provider`, or a JSON-RPC error naming what is unknown. */
async function connectorOf(deps: ListDeps, provider: string, unknown: () => Error): Promise<CatalogConnector> {
  let connector: CatalogConnector | undefined;
  try {
    connector = await deps.catalog.byProvider(provider);
  } catch {
    throw rpcFailure(INTERNAL_ERROR, STORAGE_UNAVAILABLE);
  }
  if (!connector) throw unknown();
  return connector;
}

/** Maps the provider's URIs in a read's contents or a prompt's messages to aggregate ones. */
function mappedUris(provider: string, result: Record<string, unknown>): Record<string, unknown> {
  const mapItem = (item: unknown): unknown => {
    if (typeof item !== 'object' || item === null) return item;
    const record = item as Record<string, unknown>;
    if (typeof record['uri'] === 'string') return { ...record, uri: aggregateUri(provider, record['uri']) };
    if (typeof record['resource'] === 'object' && record['resource'] !== null)
      return { ...record, resource: mapItem(record['resource']) };
    return record;
  };
  const out = { ...result };
  if (Array.isArray(out['contents'])) out['contents'] = out['contents'].map(mapItem);
  if (Array.isArray(out['messages']))
    out['messages'] = out['messages'].map((m: unknown) =>
      typeof m === 'object' && m !== null && 'content' in m
        ? { ...(m as Record<string, unknown>), content: mapItem((m as { content: unknown }).content) }
        : m,
    );
  return out;
}

/**
 * A receipted request (resources/read, prompts/get): authorized, opened, sent, recorded. Resolves
 * with the upstream's result as the agent gets it; throws its JSON-RPC error otherwise (also
 * receipted).
 */
async function receipted(
  deps: ListDeps,
  scope: RequestScope,
  request: { connector: CatalogConnector; method: 'resources/read' | 'prompts/get'; subject: string; params: Params },
): Promise<Record<string, unknown>> {
  const { pipeline } = deps;
  const { identity } = scope;
  const provider = request.connector.provider;
  const call = pipeline.open({ identity, provider, tool: request.method, path: 'aggregate' });
  call.subject = request.subject.slice(0, MAX_TOOL_NAME_LENGTH);
  const settle = async (outcome: CallOutcome) => {
    try {
      await pipeline.record(call, outcome);
    } catch {
      throw rpcFailure(INTERNAL_ERROR, STORAGE_UNAVAILABLE);
    }
  };
  const authorization = await pipeline.authorize({ identity, provider, method: request.method, tool: request.subject });
  if (!authorization.allowed) {
    const why = pipeline.refusal(authorization);
    await settle({ refused: why });
    throw rpcFailure(INVALID_REQUEST, `Refused by Plaza: ${why}`);
  }
  // Only a 2026-07-28 caller (it declared its capabilities) takes part in a round trip.
  const states = scope.clientCapabilities ? deps.requestStates?.(identity.agentId) : undefined;
  const params = await withUpstreamState(request.params, scope, states, provider, settle);
  let response;
  try {
    response = await askUpstream(deps, {
      call,
      identity,
      connector: request.connector,
      req: scope.req,
      method: request.method,
      params,
      signal: scope.signal,
      clientCapabilities: scope.clientCapabilities,
      onNotification: relayTo(scope.notify, request.params._meta?.['progressToken'], scope.logLevel),
    });
  } catch (error) {
    const cancelled = cancelledBy(scope.signal);
    if (cancelled !== undefined) {
      await settle({ cancelled });
      throw rpcFailure(INVALID_REQUEST, 'Request cancelled by the caller.');
    }
    const why = error instanceof UpstreamCallError ? error.message : 'the upstream request failed';
    await settle({ failure: why });
    throw rpcFailure(INTERNAL_ERROR, `Upstream failed: ${why}.`);
  }
  const answer = callAnswer(response, request.method);
  if ('error' in answer) {
    await settle({ error: answer.error });
    throw rpcFailure(answer.error.code, answer.error.message);
  }
  if ('malformed' in answer) {
    await settle({ failure: answer.malformed });
    throw rpcFailure(INTERNAL_ERROR, `Upstream failed: ${answer.malformed}.`);
  }
  if (answer.result['resultType'] === 'input_required') {
    if (!states) {
      const why = `the provider asks the caller for input (multi round trip), which /mcp passes only to a 2026-07-28 client; use /mcp/p/${provider}`;
      await settle({ failure: why });
      throw rpcFailure(INTERNAL_ERROR, `Upstream failed: ${why}.`);
    }
    await settle({ result: answer.result });
    const state = answer.result['requestState'];
    return {
      ...answer.result,
      requestState: await states.seal(provider, typeof state === 'string' ? state : undefined),
    };
  }
  await settle({ result: answer.result });
  return mappedUris(provider, answer.result);
}

/**
 * `params` as they go upstream: with the inputs of a round trip the caller continues and the
 * provider's own state, opened from the sealed one (refused, receipted, when it is not this agent's
 * for this provider).
 */
async function withUpstreamState(
  params: Params,
  scope: RequestScope,
  states: RequestStates | undefined,
  provider: string,
  settle: (outcome: CallOutcome) => Promise<void>,
): Promise<Params> {
  const round = scope.inputRound;
  if (!round) return params;
  const out: Params = { ...params };
  if (round.inputResponses !== undefined) out['inputResponses'] = round.inputResponses;
  if (round.requestState === undefined) return out;
  const opened = states ? await states.open(round.requestState) : undefined;
  if (!opened || opened.provider !== provider) {
    const why = 'the requestState was not issued by Plaza for this provider and agent';
    await settle({ refused: why });
    throw rpcFailure(INVALID_PARAMS, `Invalid or expired requestState: ${why}.`);
  }
  if (opened.state !== undefined) out['requestState'] = opened.state;
  return out;
}

/** resources/read of an aggregate URI. */
export async function readResource(deps: ListDeps, scope: RequestScope, params: Params) {
  const uri = String(params['uri']);
  const notFound = () => rpcFailure(INVALID_PARAMS, `Resource not found: ${uri}`, { uri });
  const own = providerUri(uri);
  if (!own) throw notFound();
  const connector = await connectorOf(deps, own.provider, notFound);
  return receipted(deps, scope, {
    connector,
    method: 'resources/read',
    subject: own.uri,
    params: { ...params, uri: own.uri },
  });
}

/** The provider and own name of an aggregate name `<provider>__<name>`, else undefined. */
function splitName(name: string): { provider: string; name: string } | undefined {
  const split = name.indexOf(TOOL_NAME_SEPARATOR);
  if (split <= 0 || split + TOOL_NAME_SEPARATOR.length >= name.length) return undefined;
  return { provider: name.slice(0, split), name: name.slice(split + TOOL_NAME_SEPARATOR.length) };
}

/** prompts/get of an aggregate prompt name. */
export async function getPrompt(deps: ListDeps, scope: RequestScope, params: Params) {
  const name = String(params['name']);
  const unknown = () =>
    rpcFailure(INVALID_PARAMS, `Unknown prompt ${name}: expected <provider>__<prompt> of /mcp's prompts/list.`);
  const own = splitName(name);
  if (!own) throw unknown();
  const connector = await connectorOf(deps, own.provider, unknown);
  return receipted(deps, scope, {
    connector,
    method: 'prompts/get',
    subject: own.name,
    params: { ...params, name: own.name },
  });
}

/** completion/complete for an aggregate prompt or resource template (no receipt: nothing is read). */
export async function complete(deps: ListDeps, scope: RequestScope, params: Params) {
  const ref = (params['ref'] ?? {}) as { type?: unknown; name?: unknown; uri?: unknown };
  const unknown = () =>
    rpcFailure(INVALID_PARAMS, 'Unknown reference: name a prompt or resource template /mcp listed.');
  const own =
    ref.type === 'ref/prompt' && typeof ref.name === 'string'
      ? (() => {
          const s = splitName(ref.name);
          return s && { provider: s.provider, ref: { ...ref, name: s.name } };
        })()
      : ref.type === 'ref/resource' && typeof ref.uri === 'string'
        ? (() => {
            const s = providerUri(ref.uri);
            return s && { provider: s.provider, ref: { ...ref, uri: s.uri } };
          })()
        : undefined;
  if (!own) throw unknown();
  const connector = await connectorOf(deps, own.provider, unknown);
  let response;
  try {
    response = await askUpstream(deps, {
      identity: scope.identity,
      connector,
      req: scope.req,
      method: 'completion/complete',
      params: { ...params, ref: own.ref },
      signal: scope.signal,
      clientCapabilities: scope.clientCapabilities,
    });
  } catch (error) {
    throw rpcFailure(INTERNAL_ERROR, `Upstream failed: ${error instanceof Error ? error.message : 'no answer'}.`);
  }
  const answer = callAnswer(response, 'completion/complete');
  if ('error' in answer) throw rpcFailure(answer.error.code, answer.error.message);
  if ('malformed' in answer) throw rpcFailure(INTERNAL_ERROR, `Upstream failed: ${answer.malformed}.`);
  return answer.result;
}
