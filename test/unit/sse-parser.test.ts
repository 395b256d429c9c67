/**
 * Pins the prober's event-stream parser (probes/internal/sse.ts) to the HTML standard's rules:
 * any line ending, even split across chunks; multi-line data; comments, event names and ids; a
 * byte-order mark; and no event for a block the stream never finished.
 */
import { describe, expect, it } from 'vitest';

import { createSseParser } from '../../probes/internal/sse.ts';

const all = (chunks: string[]) => {
  const parser = createSseParser();
  return chunks.flatMap((c) => parser.push(c));
};

describe('createSseParser', () => {
  it.each([
    ['LF', 'data: one\n\ndata: two\n\n'],
    ['CRLF', 'data: one\r\n\r\ndata: two\r\n\r\n'],
    ['CR', 'data: one\r\rdata: two\r\r'],
  ])('splits events on %s line endings', (_name, text) => {
    expect(all([text]).map((e) => e.data)).toEqual(['one', 'two']);
  });

  it('gives the same events whatever the chunking, even a CRLF cut in half', () => {
    const text = '\uFEFF: hello\r\nevent: message\r\nid: 1\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: other\r\ndata:x\r\n\r\n';
    const whole = all([text]);
    expect(whole).toEqual([
      { event: 'message', data: '{"a":\n1}', id: '1' },
      { event: 'other', data: 'x', id: '1' },
    ]);
    for (let cut = 1; cut < text.length; cut++) expect(all([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    expect(all([...text])).toEqual(whole);
  });

  it('skips blocks without data and never dispatches an unfinished one', () => {
    expect(all(['id: 5\n\n', ': keep-alive\n\n', 'retry: 10\n\n', 'data: cut off'])).toEqual([]);
  });

  it('keeps a field without a colon as an empty value and strips one leading space only', () => {
    expect(all(['data\ndata:  two spaces\n\n'])).toEqual([{ event: 'message', data: '\n two spaces', id: undefined }]);
  });
});
