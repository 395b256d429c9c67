import { Router } from 'express';
import { z } from 'zod';

import {
  RECEIPT_STATUSES,
  type ReceiptFilter,
  type ReceiptLog,
  renderCheckpoint,
  renderInclusion,
  renderReceipt,
} from '../../receipts/index.ts';
import type { AccountService } from '../accounts/index.ts';
import { drainedOrClosed } from '../http/index.ts';
import { NotFoundError, ValidationError } from '../kernel/index.ts';
import { requireApiKey } from './auth.ts';

// PostgreSQL refuses a NUL in a query parameter (it answered 500).
const noNul = (v: string) => !v.includes('\u0000');
const text = z.string().min(1).max(300).refine(noNul, 'must not contain NUL characters');
// An offset can move a four-digit year out of 1..9999, which PostgreSQL refuses (it answered 500).
const when = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).refine((v) => {
  const year = new Date(v).getUTCFullYear();
  return year >= 1 && year <= 9999;
}, 'must be in the years 1 to 9999 (UTC)');
const FilterShape = {
  agin_id: text.optional(),
  tool: text.optional(),
  provider: text.optional(),
  status: z.enum(RECEIPT_STATUSES).optional(),
  since: when.optional(),
  until: when.optional(),
};
const ListQuerySchema = z.strictObject({
  ...FilterShape,
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,18}$/, 'is not a cursor of this API')
    // Checks run on, so this sees what the regex refused too: only digits reach BigInt.
    .refine((v) => !/^\d+$/.test(v) || BigInt(v) <= 9_223_372_036_854_775_807n, 'is not a cursor of this API')
    .optional(),
  limit: z.coerce
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(500, 'must be at most 500')
    .default(100),
});
const ExportQuerySchema = z.strictObject(FilterShape);
const size = z.coerce.number().int('must be an integer').min(1, 'must be at least 1').max(Number.MAX_SAFE_INTEGER);
const ConsistencyQuerySchema = z.strictObject({ first: size, second: size });
const CallIdSchema = z.string().min(1).max(200).refine(noNul);

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({
    path: i.path.map(String).join('.'),
    message: i.code === 'unrecognized_keys' ? `unknown parameter(s): ${i.keys.join(', ')}` : i.message,
  }));
  const first = issues[0]!;
  throw new ValidationError(`Invalid query: ${first.path ? `${first.path}: ` : ''}${first.message}`, {
    details: { issues },
    ...(first.path ? { param: first.path } : {}),
  });
}

function filterOf(accountId: string, q: z.infer<typeof ExportQuerySchema> & { cursor?: string }): ReceiptFilter {
  const filter: ReceiptFilter = { accountId };
  if (q.agin_id !== undefined) filter.aginId = q.agin_id;
  if (q.tool !== undefined) filter.tool = q.tool;
  if (q.provider !== undefined) filter.provider = q.provider;
  if (q.status !== undefined) filter.status = q.status;
  if (q.since !== undefined) filter.since = new Date(q.since);
  if (q.until !== undefined) filter.until = new Date(q.until);
  if (filter.since && filter.until && filter.since > filter.until)
    throw new ValidationError('Invalid query: since is after until', { param: 'since' });
  if (q.cursor !== undefined) filter.afterSeq = BigInt(q.cursor);
  return filter;
}

/**
 * Receipts for auditors (docs/receipts.md): an account's receipts (API key; only receipts of its
 * own agents), one receipt with its inclusion proof, a JSONL export for `plaza receipts verify`,
 * the latest signed checkpoint and consistency proofs between tree sizes (public: they reveal
 * only tree sizes and hashes).
 */
export function receiptRoutes(deps: {
  accounts: AccountService;
  receipts: ReceiptLog;
  checkpointMaxAgeMs: number;
}): Router {
  const { receipts } = deps;
  const router = Router();
  const auth = requireApiKey(deps.accounts);

  router.get('/api/receipts/checkpoints/latest', async (req, res) => {
    parse(z.strictObject({}), req.query);
    const checkpoint = await receipts.freshCheckpoint(deps.checkpointMaxAgeMs);
    if (!checkpoint) throw new NotFoundError('No receipt checkpoint yet.');
    res.json({
      success: true,
      code: 'SUCCESS',
      data: { checkpoint: renderCheckpoint(checkpoint), jwks_url: '/.well-known/jwks.json' },
    });
  });

  router.get('/api/receipts/checkpoints/consistency', async (req, res) => {
    const { first, second } = parse(ConsistencyQuerySchema, req.query);
    if (first > second) throw new ValidationError('Invalid query: first is larger than second', { param: 'first' });
    const proof = await receipts.consistency(first, second);
    if (!proof) throw new NotFoundError(`No checkpoint covers tree size ${second} yet.`);
    res.json({ success: true, code: 'SUCCESS', data: { first, second, consistency_path: proof } });
  });

  router.get('/api/receipts/export', auth, async (req, res) => {
    const filter = filterOf(req.principal!.accountId, parse(ExportQuerySchema, req.query));
    const lines = receipts.exportLines(filter);
    // The first line is produced before any byte is sent, so a failing checkpoint still gets a JSON error.
    const first = await lines.next();
    res
      .status(200)
      .type('application/x-ndjson')
      .setHeader('Content-Disposition', 'attachment; filename="receipts.jsonl"');
    if (!first.done) res.write(`${first.value}\n`);
    for await (const line of lines) {
      if (res.destroyed) break;
      if (!res.write(`${line}\n`)) await drainedOrClosed(res);
    }
    res.end();
  });

  router.get('/api/receipts', auth, async (req, res) => {
    const query = parse(ListQuerySchema, req.query);
    const page = await receipts.list(filterOf(req.principal!.accountId, query), query.limit);
    res.json({
      success: true,
      code: 'SUCCESS',
      data: { receipts: page.receipts.map(renderReceipt), count: page.receipts.length, next_cursor: page.nextCursor },
    });
  });

  router.get('/api/receipts/:call_id', auth, async (req, res) => {
    parse(z.strictObject({}), req.query);
    const callId = CallIdSchema.safeParse(req.params['call_id']);
    if (!callId.success) throw new NotFoundError('Receipt not found.');
    const proven = await receipts.get(callId.data, req.principal!.accountId);
    if (!proven) throw new NotFoundError('Receipt not found.');
    res.json({
      success: true,
      code: 'SUCCESS',
      data: {
        receipt: renderReceipt(proven.receipt),
        inclusion: proven.inclusion ? renderInclusion(proven.inclusion) : null,
        checkpoint: proven.checkpoint ? renderCheckpoint(proven.checkpoint) : null,
      },
    });
  });

  return router;
}
