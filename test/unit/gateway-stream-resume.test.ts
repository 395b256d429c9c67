/**
 * Pins how the passthrough resumes a POST's event stream the provider closed early
 * (gateway/internal/stream-resume.ts): the wait honours the provider's `retry` within bounds, a
 * wait ends when the call does, and only an event stream counts as resumed.
 */
import { describe, expect, it } from 'vitest';

import type { UpstreamHttpResponse } from '../../gateway/index.ts';
import { pause, reopenStream, resumeDelay, resumePoint } from '../../gateway/internal/stream-resume.ts';

function answer(status: number, type: string): UpstreamHttpResponse & { discarded: boolean } {
  const response = {
    status,
    discarded: false,
    header: (name: string) => (name === 'content-type' ? type : undefined),
    body: (async function* () {})(),
    discard: () => void (response.discarded = true),
  };
  return response;
}

describe('resumeDelay', () => {
  it.each([
    ["the provider's retry", '50', 0, 50],
    ['a second when it set none', undefined, 0, 1_000],
    ['a second for a retry that is no number', '1e3', 0, 1_000],
    ['the retry doubled per failed resume', '50', 2, 200],
    ['never more than 5 s', '600000', 0, 5_000],
    ['never more than 5 s however many failed', undefined, 10, 5_000],
  ])('waits %s', (_name, retry, failures, ms) => {
    expect(resumeDelay(retry, failures)).toBe(ms);
  });
});

describe('resumePoint', () => {
  it('resumes from an id that can go back as Last-Event-ID', () => {
    expect(resumePoint('2f0c_1764200000000_ab\tc')).toBe('2f0c_1764200000000_ab\tc');
  });

  it.each([
    ['an empty id (the SSE reset)', ''],
    ['a NUL', 'a\0b'],
    ['a character past ASCII', 'é'],
    ['a control character', '\x7f'],
  ])('resumes from nowhere after %s', (_name, id) => {
    expect(resumePoint(id)).toBeUndefined();
  });
});

describe('pause', () => {
  it('ends as soon as the call is aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    await pause(10_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('reopenStream', () => {
  it('sends the last event id and takes an event stream as resumed', async () => {
    const stream = answer(200, 'text/event-stream');
    let asked = '';
    const opened = await reopenStream(async (id) => ((asked = id), stream), 'ev-7');
    expect(asked).toBe('ev-7');
    expect(opened).toEqual({ stream });
  });

  it.each([
    [503, 'application/json', true],
    [429, 'application/json', true],
    [405, 'application/json', false],
    [404, 'application/json', false],
    [200, 'application/json', false],
  ])('refuses HTTP %i %s (tried again: %s) and releases its connection', async (status, type, retryable) => {
    const refused = answer(status, type);
    expect(await reopenStream(async () => refused, 'ev-1')).toEqual({
      failure: status === 200 ? 'HTTP 200, not an event stream' : `HTTP ${status}`,
      retryable,
    });
    expect(refused.discarded).toBe(true);
  });

  it('may try again when the provider could not be reached', async () => {
    const opened = await reopenStream(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    }, 'ev-1');
    expect(opened).toEqual({ failure: 'cannot reach the upstream (ECONNREFUSED)', retryable: true });
  });
});
