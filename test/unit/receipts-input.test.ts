/**
 * parseReceiptInput checks receipt inputs by hand (it runs on every gateway call); the published
 * zod schema states the same rules. Random inputs, valid and broken field by field, get the same
 * answer from both: accepted with the same stored values, or refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { parseReceiptInput, ReceiptInputSchema } from '../../receipts/index.ts';

const valid = {
  callId: 'call_01',
  aginId: 'agin_01',
  agentPrincipal: 'agent:acct_1/agent_1',
  accountId: 'acct_1',
  tool: 'echo',
  provider: 'everything',
  status: 'ok',
  outcome: 'ok',
  latencyMs: 12,
  resultDigest: 'a'.repeat(64),
  time: 1_764_000_000_000,
};

const text = (max: number) =>
  fc.oneof(
    fc.string({ minLength: 0, maxLength: max + 2 }),
    fc.string({ minLength: max - 1, maxLength: max + 1, unit: 'grapheme' }),
    fc.constantFrom('a\u0000b', '\ud800x', ''),
  );
const anything = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 5 }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const field: Record<string, fc.Arbitrary<unknown>> = {
  callId: text(200),
  aginId: text(200),
  agentPrincipal: text(300),
  accountId: fc.oneof(fc.constant(null), text(200)),
  tool: text(300),
  provider: text(200),
  status: fc.constantFrom('ok', 'error', 'OK', 'failed', ''),
  outcome: fc.oneof(
    fc.string({ maxLength: 50 }),
    fc.string({ minLength: 3999, maxLength: 4001 }),
    fc.constant('x\u0000'),
  ),
  latencyMs: fc.oneof(
    fc.integer({ min: -2, max: 5 }),
    fc.constantFrom(2_147_483_647, 2_147_483_648, 1.5, Number.NaN, Number.POSITIVE_INFINITY),
  ),
  resultDigest: fc.oneof(
    fc.constant('f'.repeat(64)),
    fc.constant('F'.repeat(64)),
    fc.constant('a'.repeat(63)),
    fc.string({ maxLength: 70 }),
  ),
  time: fc.oneof(
    fc.integer({ min: -1, max: 2 ** 40 }),
    fc.constantFrom(253_402_300_799_999, 253_402_300_800_000, 0.5, 2 ** 60),
  ),
};

/** A valid input with a few fields replaced by random (often invalid) values, removed or added. */
const input = fc
  .record({
    changed: fc.oneof(
      fc.constant({}),
      fc.dictionary(fc.constantFrom(...Object.keys(field)), fc.constant(true), { maxKeys: 3 }),
    ),
    values: fc.record(
      Object.fromEntries(
        Object.entries(field).map(([k, arb]) => [
          k,
          fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: anything }),
        ]),
      ),
    ),
    removed: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom(...Object.keys(field)) },
    ),
    extra: fc.oneof(
      { weight: 7, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('extra', 'seq', '__proto__x') },
    ),
  })
  .map(({ changed, values, removed, extra }) => {
    const out: Record<string, unknown> = { ...valid };
    for (const key of Object.keys(changed)) out[key] = values[key];
    if (removed !== undefined) delete out[removed];
    if (extra !== undefined) out[extra] = 1;
    return out;
  });

function byHand(value: unknown): { ok: true; data: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, data: parseReceiptInput(value) };
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return { ok: false, message: (error as Error).message };
  }
}

describe('parseReceiptInput', () => {
  it('accepts and refuses what the published schema does, with the same stored values', () => {
    let accepted = 0;
    fc.assert(
      fc.property(input, (value) => {
        const schema = ReceiptInputSchema.safeParse(value);
        const hand = byHand(value);
        expect(hand.ok, JSON.stringify(value)).toBe(schema.success);
        if (schema.success && hand.ok) {
          accepted++;
          expect(hand.data).toEqual(schema.data);
        }
      }),
      { numRuns: 3_000 },
    );
    // Both kinds were met, not only refusals.
    expect(accepted).toBeGreaterThan(100);
  });

  it('names the bad field and stores NUL and lone surrogates as U+FFFD', () => {
    expect(() => parseReceiptInput({ ...valid, latencyMs: -1 })).toThrow(/invalid receipt: latencyMs/);
    expect(() => parseReceiptInput({ ...valid, resultDigest: 'nope' })).toThrow(/invalid receipt: resultDigest/);
    expect(() => parseReceiptInput({ ...valid, seq: 3 })).toThrow(/invalid receipt: seq: unrecognized key/);
    expect(() => parseReceiptInput(null)).toThrow(/invalid receipt/);
    // Keys a prototype lends count, as in the schema's strict check.
    const inherited = Object.assign(Object.create({ extra: 1 }), valid);
    expect(ReceiptInputSchema.safeParse(inherited).success).toBe(false);
    expect(() => parseReceiptInput(inherited)).toThrow(/invalid receipt: extra: unrecognized key/);
    expect(parseReceiptInput({ ...valid, tool: 'a\u0000b', outcome: '\ud800' })).toMatchObject({
      tool: 'a\uFFFDb',
      outcome: '\uFFFD',
    });
  });
});
