import { z } from 'zod';

import { storableText } from '../src/kernel/index.ts';
import type { ReceiptInput } from './encoding.ts';

// NUL and lone surrogates become U+FFFD (storableText): stored and hashed alike.
const text = (max: number) => z.string().min(1).max(max).transform(storableText);

/** What a writer accepts (and what a spool line must hold): checked before anything is stored. */
export const ReceiptInputSchema = z.strictObject({
  callId: text(200),
  aginId: text(200),
  agentPrincipal: text(300),
  accountId: text(200).nullable(),
  tool: text(300),
  provider: text(200),
  status: z.enum(['ok', 'error']),
  outcome: z.string().max(4000).transform(storableText),
  latencyMs: z.number().int().min(0).max(2_147_483_647),
  resultDigest: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest'),
  time: z.number().int().min(0).max(253_402_300_799_999),
}) satisfies z.ZodType<ReceiptInput>;

/** Parses a receipt input, throwing a TypeError that names the bad field (a programming error). */
export function parseReceiptInput(value: unknown): ReceiptInput {
  const parsed = ReceiptInputSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TypeError(`invalid receipt: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
}
