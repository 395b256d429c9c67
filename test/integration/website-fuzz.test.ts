/**
 * Property-based fuzzing (fast-check) of the two website POST bodies: whatever arrives (random
 * JSON, near-valid bodies, broken JSON), POST /api/agent/intent and POST /api/leads never answer
 * 5xx, answer only 200/201 or the §7 codes (400 invalid_prompt / invalid_lead), and every answer
 * matches the served /openapi.json.
 */
import fc from 'fast-check';
import responseValidatorModule from 'openapi-response-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const OpenAPIResponseValidator = ((responseValidatorModule as unknown as { default?: unknown }).default ??
  responseValidatorModule) as typeof responseValidatorModule;
const RUNS = 200;

/** A body as sent on the wire: JSON of some value, or arbitrary text that is rarely JSON. */
function wire(value: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  );
}

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ minLength: 1990, maxLength: 2100 }),
);
const intentBodies = wire(
  fc.oneof(
    fc.record({ prompt: text }),
    fc.record({ prompt: fc.anything() }, { requiredKeys: [] }),
    fc.record({ prompt: text, extra: fc.anything() }),
    fc.anything(),
  ),
);
const scenario = fc.oneof(
  fc.constantFrom('enterprise', 'commerce', 'developer', 'growth'),
  fc.string({ maxLength: 12 }),
  fc.anything(),
);
const email = fc.oneof(fc.emailAddress(), fc.string({ maxLength: 30 }), fc.constant('a@example.com'));
const optional = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ minLength: 190, maxLength: 2100 }),
  fc.constant(null),
  fc.integer(),
);
const validScenario = fc.constantFrom('enterprise', 'commerce', 'developer', 'growth');
const shortOptional = fc.option(fc.string({ maxLength: 40 }), { nil: null });
const leadBodies = wire(
  fc.oneof(
    fc.record(
      {
        email: fc.emailAddress(),
        scenario: validScenario,
        company: shortOptional,
        painPoint: shortOptional,
        teamSize: shortOptional,
      },
      { requiredKeys: ['email', 'scenario'] },
    ),
    fc.record(
      {
        email,
        scenario,
        company: optional,
        painPoint: optional,
        currentTools: optional,
        desiredAutomation: optional,
        teamSize: optional,
      },
      { requiredKeys: [] },
    ),
    fc.record({ email, scenario, unknownField: fc.anything() }),
    fc.anything(),
  ),
);

describe.each(BACKENDS)('website POST bodies under fuzzing on %s', (backend) => {
  let plaza: TestPlaza;
  let doc: any;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, {
      env: { PLAZA_RATE_LIMIT_INTENT_PER_MIN: '100000', PLAZA_RATE_LIMIT_LEADS_PER_MIN: '100000', LOG_LEVEL: 'warn' },
    });
    doc = await (await fetch(`${plaza.url}/openapi.json`)).json();
  });
  afterAll(async () => {
    await plaza?.close();
  });

  const validators = new Map<string, InstanceType<typeof OpenAPIResponseValidator>>();
  async function send(path: string, body: string) {
    const res = await fetch(`${plaza.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const json: any = await res.json();
    let validator = validators.get(path);
    if (!validator) {
      validator = new OpenAPIResponseValidator({
        responses: doc.paths[path].post.responses,
        components: doc.components,
      });
      validators.set(path, validator);
    }
    return { status: res.status, json, errors: validator.validateResponse(res.status, json) };
  }

  // One known-good and one known-bad body run first on every seed (fast-check `examples`), so both
  // sides are always reached; the random ones follow. fc.emailAddress() can produce valid RFC
  // addresses the lead validator refuses, so a seed may otherwise generate no accepted lead.
  it.each([
    [
      '/api/agent/intent',
      intentBodies,
      [200],
      'invalid_prompt',
      ['{"prompt":"Automate our invoices"}', '{"prompt":""}'],
    ],
    [
      '/api/leads',
      leadBodies,
      [200, 201],
      'invalid_lead',
      ['{"email":"fuzz@example.com","scenario":"developer"}', '{"email":"nope","scenario":"developer"}'],
    ],
  ] as const)('POST %s answers only success or its §7 code', async (path, bodies, okStatuses, code, examples) => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const { status, json, errors } = await send(path, body);
        seen.add(status);
        expect(errors, JSON.stringify({ body: body.slice(0, 200), errors })).toBeUndefined();
        if ((okStatuses as readonly number[]).includes(status)) return;
        expect(status).toBe(400);
        expect(json.code).toBe(code);
      }),
      { numRuns: RUNS, examples: examples.map((e) => [e] as [string]) },
    );
    // The generators must reach both sides, or the property proves little.
    expect(seen.has(400)).toBe(true);
    expect([...seen].some((s) => (okStatuses as readonly number[]).includes(s))).toBe(true);
  });
});
