/**
 * Relays an upstream answer that is no answer to the requests themselves: a status outside 2xx,
 * or 202/204 (accepted, nothing to say). The caller gets what MCP has it expect: the transport's
 * own refusals with their status, a failed call in-band, a forgotten session as 404.
 */
import { nestsDeeperThan } from '../../src/kernel/index.ts';
import { GatewayError, sendGatewayError } from '../error-table.ts';
import { MAX_JSON_DEPTH, parseJson, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import { readBodyText } from '../internal/upstream-exchange.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { credentialRefusal, errorAnswering, forgotSession, onlyAsked, upstreamErrorMessage } from './answer-filter.ts';
import { DROPPED, type Exchange, type PassthroughDeps, SESSION_GONE } from './exchange.ts';
import { answerTasks, failedCall, failRequest } from './request-answers.ts';
import { sendAnswers } from './response-end.ts';
import type { UpstreamControl } from './upstream-control.ts';

/** Upstream statuses that refuse the request itself (not the call): a call answered so gets the status too. */
const TRANSPORT_REFUSALS = new Set([400, 406, 415]);

/** Relays the upstream's refusal (see the file's comment). */
export async function relayRefusal(
  deps: PassthroughDeps,
  ex: Exchange,
  control: UpstreamControl,
  upstream: UpstreamHttpResponse,
  responseHeaders: Record<string, string>,
): Promise<void> {
  const { res, call } = ex;
  const ok = upstream.status >= 200 && upstream.status <= 299;
  const type = upstream.header('content-type') ?? '';
  // Read within the call's time: an upstream that drips its refusal is cut by the timer.
  const text = await readBodyText(upstream, 64 * 1024).catch(() => '');
  control.stopTimer();
  // A session the upstream forgot (it restarted) is a 404, which tells a client to start a
  // new one. Servers built on the SDK's example (server-everything among them) say 400
  // "No valid session ID provided" instead, and a client that gets it is stuck for good.
  const sessionGone =
    ex.upstreamSession !== undefined && (upstream.status === 404 || (upstream.status === 400 && forgotSession(text)));
  // A provider that wants a credential of its own (or refuses the one sent) says 401 with
  // its own WWW-Authenticate. Neither goes to the caller as such: the caller's Authorization
  // is its Plaza credential, and a client that ran the provider's authorization flow would
  // replace it. The caller is told where the provider's credential goes instead.
  const credential =
    upstream.status === 401 ? credentialRefusal(ex.provider, ex.headers['authorization'] !== undefined) : undefined;
  const callError =
    call && !sessionGone && !credential && upstream.status >= 400 && upstream.status < 500
      ? errorAnswering(text, call.callId)
      : undefined;
  if (call && callError) {
    // The upstream refused the call itself as JSON-RPC has it (2026-07-28's -32020, -32021, -32022
    // under HTTP 400): relayed as that error, under the caller's id, with the upstream's status.
    await deps.pipeline.record(call, { error: callError.error });
    sendJson(res, upstream.status, { ...callError, id: ex.callRpcId ?? null }, responseHeaders);
    return;
  }
  if (call) {
    const said = upstreamErrorMessage(text);
    const why = sessionGone
      ? 'the upstream no longer knows the session (initialize a new one)'
      : (credential ??
        (ok
          ? `the upstream accepted the call (HTTP ${upstream.status}) without answering it`
          : `the upstream answered HTTP ${upstream.status}${said ? ` (${said})` : ''}`));
    await deps.pipeline.record(call, { failure: why });
    // The transport's own refusals keep their status, as the spec has them (400 for an
    // unsupported MCP-Protocol-Version, 404 for a forgotten session, 406 and 415 for what the
    // client may not send); an upstream failing the call is answered in-band.
    const status = sessionGone ? 404 : TRANSPORT_REFUSALS.has(upstream.status) ? upstream.status : 200;
    sendJson(res, status, failedCall(deps, ex, why), responseHeaders);
    return;
  }
  if (sessionGone) {
    sendGatewayError(res, new GatewayError('session_gone', SESSION_GONE), responseHeaders);
    return;
  }
  if (credential) {
    sendGatewayError(
      res,
      new GatewayError('upstream_credential_refused', `${credential[0]!.toUpperCase()}${credential.slice(1)}.`),
      responseHeaders,
    );
    return;
  }
  // An upstream failing (5xx) or redirecting (not followed) is no answer from the MCP server:
  // the POST's requests get JSON-RPC errors saying so. (A task's result coming with such a
  // status is still receipted and passed on, below.)
  if (
    ex.method === 'POST' &&
    (upstream.status >= 500 || (upstream.status >= 300 && upstream.status < 400)) &&
    !(ex.taskResults.size > 0 && type.startsWith('application/json') && text)
  ) {
    failRequest(
      ex,
      `the upstream answered HTTP ${upstream.status}${upstreamErrorMessage(text) ? ` (${upstreamErrorMessage(text)})` : ''}`,
      responseHeaders,
      502,
    );
    return;
  }
  await relayRefusalBody(deps, ex, upstream, text, responseHeaders);
}

/**
 * Method not allowed (405), accepted notifications (202), other refusals: the client needs the
 * real status; the upstream's body is passed on only when it is JSON-RPC. A refusal whose body
 * cannot be passed on gets a JSON-RPC error saying what the upstream answered.
 */
async function relayRefusalBody(
  deps: PassthroughDeps,
  ex: Exchange,
  upstream: UpstreamHttpResponse,
  text: string,
  responseHeaders: Record<string, string>,
): Promise<void> {
  const { res } = ex;
  const type = upstream.header('content-type') ?? '';
  const passStatus = () => {
    if (upstream.status < 300) {
      res.writeHead(upstream.status, responseHeaders);
      res.end();
      return;
    }
    const said = upstreamErrorMessage(text);
    const code = upstream.status >= 500 ? RPC_ERRORS.internal : RPC_ERRORS.invalidRequest;
    sendJson(
      res,
      upstream.status,
      rpcError(null, code, `The upstream answered HTTP ${upstream.status}${said ? ` (${said})` : ''}.`),
      responseHeaders,
    );
  };
  if (!type.startsWith('application/json') || !text) {
    passStatus();
    return;
  }
  let refusal: unknown;
  try {
    refusal = parseJson(text);
  } catch {
    refusal = undefined;
  }
  if (ex.taskResults.size > 0) {
    // A task's result is receipted whatever status comes with it, or not passed on at all.
    const asAsked =
      refusal === undefined || nestsDeeperThan(refusal, MAX_JSON_DEPTH) ? DROPPED : onlyAsked(refusal, ex.asked);
    if (asAsked === DROPPED) passStatus();
    else sendAnswers(res, upstream.status, await answerTasks(deps, ex, asAsked), responseHeaders);
    return;
  }
  // Passed on as it came, but for answers to requests this POST did not send (see asked).
  const asAsked = refusal === undefined ? DROPPED : onlyAsked(refusal, ex.asked);
  if (asAsked === DROPPED) passStatus();
  else {
    const body = asAsked === refusal ? text : JSON.stringify(asAsked);
    res.writeHead(upstream.status, { 'content-type': 'application/json', ...responseHeaders });
    res.end(body);
  }
}
