/**
 * The usage log writes its rows in batches, one array per column. Whatever a row holds is stored
 * as given, on both backends: quotes, braces, commas, backslashes and the word NULL (which
 * PostgreSQL's array text would take for its own syntax), empty text, text outside ASCII and the
 * largest counts. A batch of many rows lands whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createUsageLog } from '../../src/chat/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';

describe.each(BACKENDS)('usage rows on %s', (backend) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await test?.dispose();
  });

  it('stores rows with awkward text and the largest counts as given', async () => {
    const usage = createUsageLog(test.db, { flushMs: 10_000 });
    const awkward = [
      { subject: 'gst_"quoted"', model: '{braces},commas', requestId: 'back\\slash' },
      { subject: 'gst_2', model: '模型 ünïcödé', requestId: 'NULL' },
      { subject: ' spaced ', model: '', requestId: 'null' },
    ];
    const rows = awkward.map((a, i) => ({
      ...a,
      subjectType: 'guest' as const,
      usage: { prompt_tokens: i, completion_tokens: 2_147_483_647 - i, total_tokens: 2_147_483_647 },
    }));
    const written = Promise.all(rows.map((row) => usage.record(row)));
    await usage.flush();
    await written;
    const stored = await test.db.prisma.chatUsage.findMany({ orderBy: { id: 'asc' } });
    expect(
      stored.map((r) => ({
        subject: r.subject,
        model: r.model,
        requestId: r.requestId,
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        totalTokens: r.totalTokens,
      })),
    ).toEqual(
      rows.map((r) => ({
        subject: r.subject,
        model: r.model,
        requestId: r.requestId,
        promptTokens: r.usage.prompt_tokens,
        completionTokens: r.usage.completion_tokens,
        totalTokens: r.usage.total_tokens,
      })),
    );
  });

  it('writes a batch of 500 rows in one go and counts them', async () => {
    const usage = createUsageLog(test.db, { flushMs: 10_000, maxBatch: 500 });
    const since = new Date(Date.now() - 1_000);
    await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        usage.record({
          subject: 'gst_batch',
          subjectType: 'guest',
          model: 'm',
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          requestId: `req_${i}`,
        }),
      ),
    );
    expect(await usage.totalSince('gst_batch', since)).toBe(1_000);
  });
});
