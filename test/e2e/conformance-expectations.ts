/**
 * Conformance scenarios (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, `--suite all`) that
 * are expected NOT to pass on a target, each with the reason the suite showed. Everything else
 * that passes directly must pass through Plaza. test/e2e/conformance.test.ts fails both when a
 * listed scenario passes (remove it from the list) and when an unlisted one fails, so the lists
 * say exactly what does not work yet. `kind: 'cannot'` would mark a scenario that can never pass
 * through that path; none is known today, all are `'not-yet'`.
 */

export interface Expectation {
  kind: 'not-yet' | 'cannot';
  reason: string;
}

const notYet = (reason: string): Expectation => ({ kind: 'not-yet', reason });

/** The fixture itself: the tasks extension (SEP-2663) is not implemented (the SDK v2 2.4.0 server has no tasks extension). */
const TASKS = notYet('the conformance target does not implement the tasks extension (SEP-2663)');
export const DIRECT: Record<string, Expectation> = Object.fromEntries(
  [
    'tasks-capability-negotiation',
    'tasks-dispatch-and-envelope',
    'tasks-lifecycle',
    'tasks-mrtr-composition',
    'tasks-mrtr-input',
    'tasks-request-headers',
    'tasks-request-state-removal',
    'tasks-required-task-error',
    'tasks-wire-fields',
  ].map((name) => [name, TASKS]),
);

/** Through `/mcp/p/<provider>`. */
export const PASSTHROUGH: Record<string, Expectation> = {};

const REFUSES_2026 = notYet(
  '/mcp refuses 2026-07-28 requests (HTTP 400, -32000 "Unsupported protocol version", id null)',
);
const TOOLS_ONLY = notYet(
  '/mcp serves tools only: prompts/*, resources/*, completion/complete and logging/setLevel answer -32601',
);
const NO_ELICITATION = notYet(
  '/mcp does not relay the upstream’s elicitation/create to the client (the suite saw no elicitation request)',
);

/** Through `/mcp`, the suite's names mapped to `<provider>__<name>` by the test's forwarder. */
export const AGGREGATE: Record<string, Expectation> = {
  'http-custom-header-server-validation': REFUSES_2026,
  'input-required-result-basic-elicitation': REFUSES_2026,
  'input-required-result-basic-list-roots': REFUSES_2026,
  'input-required-result-basic-sampling': REFUSES_2026,
  'input-required-result-capability-check': REFUSES_2026,
  'input-required-result-multi-round': REFUSES_2026,
  'input-required-result-multiple-input-requests': REFUSES_2026,
  'input-required-result-non-tool-request': REFUSES_2026,
  'input-required-result-request-state': REFUSES_2026,
  'input-required-result-result-type': REFUSES_2026,
  'input-required-result-tampered-state': REFUSES_2026,
  'server-stateless': REFUSES_2026,
  'tools-call-with-logging': TOOLS_ONLY,
  'resources-subscribe': TOOLS_ONLY,
  'resources-unsubscribe': TOOLS_ONLY,
  'elicitation-sep1034-defaults': NO_ELICITATION,
  'elicitation-sep1330-enums': NO_ELICITATION,
  'tools-call-elicitation': NO_ELICITATION,
  'tools-call-sampling': notYet(
    '/mcp does not relay the upstream’s sampling/createMessage: the call hangs until the suite gives up',
  ),
};
