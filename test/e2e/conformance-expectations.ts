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

const NO_SUBSCRIPTIONS = notYet(
  '/mcp offers no resources/subscribe (-32601 Method not found): its sessions are sealed, not stored, and it has no GET stream to deliver updates on',
);

/** Through `/mcp`, the suite's names mapped to `<provider>__<name>` by the test's forwarder. */
export const AGGREGATE: Record<string, Expectation> = {
  'resources-subscribe': NO_SUBSCRIPTIONS,
  'resources-unsubscribe': NO_SUBSCRIPTIONS,
};
