import { z } from 'zod';

import { storableText } from '../src/kernel/index.ts';
import { RECEIPT_STATUSES, type ReceiptInput, type ReceiptStatus } from './encoding.ts';

// NUL and lone surrogates become U+FFFD (storableText): stored and hashed alike.
const text = (max: number) => z.string().min(1).max(max).transform(storableText);

/**
 * What a writer accepts (and what a spool line must hold): checked before anything is stored.
 * The published shape; {@link parseReceiptInput} checks the same rules by hand (a unit test holds
 * the two to the same answers).
 */
export const ReceiptInputSchema = z.strictObject({
  callId: text(200),
  aginId: text(200),
  agentPrincipal: text(300),
  accountId: text(200).nullable(),
  tool: text(300),
  provider: text(200),
  status: z.enum(RECEIPT_STATUSES),
  outcome: z.string().max(4000).transform(storableText),
  latencyMs: z.number().int().min(0).max(2_147_483_647),
  resultDigest: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest'),
  time: z.number().int().min(0).max(253_402_300_799_999),
}) satisfies z.ZodType<ReceiptInput>;

/** Longest length of each text field; `accountId` may also be null. */
const TEXT_FIELDS = {
  callId: 200,
  aginId: 200,
  agentPrincipal: 300,
  accountId: 200,
  tool: 300,
  provider: 200,
} as const;
const KEYS = new Set([...Object.keys(TEXT_FIELDS), 'status', 'outcome', 'latencyMs', 'resultDigest', 'time']);
const DIGEST = /^[0-9a-f]{64}$/;

/**
 * Parses a receipt input, throwing a TypeError that names the bad field (a programming error).
 * The rules of {@link ReceiptInputSchema}, by hand: every gateway call passes here, and zod's
 * parse of the same object cost ~3% of the gateway's CPU in the c=32 benchmark.
 */
export function parseReceiptInput(value: unknown): ReceiptInput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return invalid('', 'expected an object');
  const v = value as Record<string, unknown>;
  // for…in, as zod's strict check: enumerable keys a prototype lends count too.
  for (const key in v) if (!KEYS.has(key)) invalid(key, 'unrecognized key');
  const texts = {} as Record<keyof typeof TEXT_FIELDS, string | null>;
  for (const [key, max] of Object.entries(TEXT_FIELDS) as [keyof typeof TEXT_FIELDS, number][]) {
    const field = v[key];
    if (field === null && key === 'accountId') texts[key] = null;
    else if (typeof field !== 'string') invalid(key, 'expected a string');
    else if (field.length < 1 || (field.length > max && codePoints(field) > max))
      invalid(key, `must be 1 to ${max} characters`);
    else texts[key] = storableText(field);
  }
  const { status, outcome, latencyMs, resultDigest, time } = v;
  if (!(RECEIPT_STATUSES as readonly unknown[]).includes(status))
    invalid('status', 'must be "ok", "error", "denied" or "rate_limited"');
  if (typeof outcome !== 'string' || (outcome.length > 4000 && codePoints(outcome) > 4000))
    invalid('outcome', 'must be a string of at most 4000 characters');
  if (!Number.isSafeInteger(latencyMs) || (latencyMs as number) < 0 || (latencyMs as number) > 2_147_483_647)
    invalid('latencyMs', 'must be an integer from 0 to 2147483647');
  if (typeof resultDigest !== 'string' || !DIGEST.test(resultDigest))
    invalid('resultDigest', 'must be a sha256 hex digest');
  if (!Number.isSafeInteger(time) || (time as number) < 0 || (time as number) > 253_402_300_799_999)
    invalid('time', 'must be an integer from 0 to 253402300799999');
  return {
    callId: texts.callId!,
    aginId: texts.aginId!,
    agentPrincipal: texts.agentPrincipal!,
    accountId: texts.accountId,
    tool: texts.tool!,
    provider: texts.provider!,
    status: status as ReceiptStatus,
    outcome: storableText(outcome as string),
    latencyMs: latencyMs as number,
    resultDigest: resultDigest as string,
    time: time as number,
  };
}

/** Length in code points, as zod measures strings: a surrogate pair is one, a lone surrogate one. */
function codePoints(value: string): number {
  let count = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    if ((value.charCodeAt(i) & 0xfc00) === 0xd800 && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

function invalid(field: string, message: string): never {
  throw new TypeError(`invalid receipt: ${field}: ${message}`);
}
