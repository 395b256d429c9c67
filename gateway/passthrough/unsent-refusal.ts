/**
 * The passthrough's refusals of a POST before anything goes upstream (a policy's refusal, or
 * too many unread answers held): kept apart from the handler, which only asks whether to go on.
 */
import type { ServerResponse } from 'node:http';

import { GATEWAY_ERROR_TABLE } from '../error-table.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { rpcError } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import type { PassthroughDeps, PostRequests } from './exchange.ts';
import { plazaAnswer } from './request-answers.ts';

/**
 * Answers in-band, with nothing sent upstream, a POST whose call the authorize hook refused, or
 * whose agent (or this instance) holds as many unread answers as it may: its call is receipted
 * as refused, its other requests get an error each. False when the POST may go on.
 */
export async function refuseUnsent(
  deps: PassthroughDeps,
  res: ServerResponse,
  post: PostRequests,
  identity: AgentIdentity,
): Promise<boolean> {
  const { call } = post;
  const busy = post.refused === undefined && post.awaited.size > 0 ? deps.held.refusal(identity.agentId) : undefined;
  const why = post.refused ?? busy;
  if (why === undefined) return false;
  const code = GATEWAY_ERROR_TABLE[post.refused === undefined ? 'held_answers_full' : 'call_refused'].rpcCode;
  if (call) await deps.pipeline.record(call, { refused: why });
  // A policy's reason is a clause (as on /mcp, which answers it as a sentence); the held-answers refusal is one already.
  const said = post.refused === undefined ? why : `${why[0]!.toUpperCase()}${why.slice(1)}`;
  const answers = [...post.awaited].map((id) =>
    call && id === call.callId
      ? plazaAnswer(deps, post, `${said}; nothing was called.`)
      : rpcError(post.taskResults.get(String(id))?.callerId ?? id, code, `${said}; nothing was sent.`),
  );
  sendJson(res, 200, post.batch ? answers : answers[0]);
  return true;
}
