/**
 * `/mcp`'s methods as one table, whichever SDK serves the request (the 2025 revisions on SDK v1's
 * Server, 2026-07-28 on SDK v2's): each takes the request's params and scope and resolves with
 * its result (or throws a JSON-RPC error, see rpcFailure).
 */
import type { ServerResponse } from 'node:http';

import type { HeldAnswers } from '../held-answers.ts';
import { guardDrain } from '../internal/answer-writer.ts';
import { callTool, type ToolCallDeps, type ToolCallParams } from './call-tool.ts';
import { gatheredFor, type ListDeps, toolsFor } from './lists.ts';
import { pageOf } from './paging.ts';
import { complete, getPrompt, readResource } from './reads.ts';
import type { RequestScope } from './scope.ts';

/** What the methods use. */
export interface MethodDeps extends ListDeps, ToolCallDeps {
  held: HeldAnswers;
  writeTimeoutMs: number;
  /** Items per page of a list (see paging.ts). */
  listPageSize: number;
}

/** One request of `/mcp`, with the response its answer is written to (held-answer counting). */
export interface MethodScope extends RequestScope {
  res: ServerResponse;
}

export type MethodHandler = (params: Record<string, unknown>, scope: MethodScope) => Promise<Record<string, unknown>>;

/** Runs `then` when `res` closes, at once when it closed already. */
export function whenClosed(res: ServerResponse, then: () => void): void {
  if (res.closed) then();
  else res.once('close', then);
}

/** Responses whose write timeout runs already (a batch's calls share one). */
const guarded = new WeakSet<ServerResponse>();

/** The methods `/mcp` serves besides the SDKs' own (initialize, ping, server/discover, logging/setLevel). */
export function aggregateMethods(deps: MethodDeps): Record<string, MethodHandler> {
  /** The page of `items` the params' cursor asks for, under `key`, with the next page's cursor. */
  const paged = (key: string, method: string, items: readonly unknown[], params: Record<string, unknown>) => {
    const { page, nextCursor } = pageOf(items, params, method, deps.listPageSize);
    return nextCursor === undefined ? { [key]: page } : { [key]: page, nextCursor };
  };
  return {
    'tools/list': async (params, scope) => paged('tools', 'tools/list', await toolsFor(deps, scope.identity), params),
    'tools/call': async (params, scope) => {
      // The SDK writes the answer: its bytes stay counted until the response closes, and a client
      // that takes none of them is cut after the write timeout.
      const hold = deps.held.open(scope.identity.agentId);
      whenClosed(scope.res, () => hold.release());
      try {
        return await callTool(deps, scope.identity, scope.req, params as unknown as ToolCallParams, {
          signal: scope.signal,
          notify: scope.notify,
          hold,
          clientCapabilities: scope.clientCapabilities,
          inputRound: scope.inputRound,
          logLevel: scope.logLevel,
          // Only a 2026-07-28 caller (it declared its capabilities) can be asked for input.
          states: scope.clientCapabilities ? deps.requestStates?.(scope.identity.agentId) : undefined,
        });
      } finally {
        if (!guarded.has(scope.res)) {
          guarded.add(scope.res);
          guardDrain(scope.res, deps.writeTimeoutMs);
        }
      }
    },
    'resources/list': async (params, scope) =>
      paged('resources', 'resources/list', await gatheredFor(deps, scope, 'resources/list'), params),
    'resources/templates/list': async (params, scope) =>
      paged(
        'resourceTemplates',
        'resources/templates/list',
        await gatheredFor(deps, scope, 'resources/templates/list'),
        params,
      ),
    'resources/read': (params, scope) => readResource(deps, scope, params),
    'prompts/list': async (params, scope) =>
      paged('prompts', 'prompts/list', await gatheredFor(deps, scope, 'prompts/list'), params),
    'prompts/get': (params, scope) => getPrompt(deps, scope, params),
    'completion/complete': (params, scope) => complete(deps, scope, params),
  };
}

/** The capabilities `/mcp` declares (the tool list's changes: see each server; those of resources and prompts: list-watch.ts). */
export const AGGREGATE_CAPABILITIES = {
  resources: { listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
} as const;
