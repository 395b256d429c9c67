/**
 * Pins the prober's event-stream parser (probes/internal/sse.ts) to the HTML standard's rules:
 * any line ending, even split across chunks; multi-line data; comments, event names and ids; a
 * byte-order mark; and no event for a block the stream never finished. Also the gateway's relay
 * parser (which keeps comments, ids and retry to pass them on) and the line splitter both share.
 */
import { describe, expect, it } from 'vitest';

import { createSseParser as createRelayParser, formatSseEvent } from '../../gateway/internal/sse.ts';
import { createSseParser } from '../../probes/internal/sse.ts';
import { createLineSplitter } from '../../src/kernel/index.ts';

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

describe('the gateway relay parser (gateway/internal/sse.ts)', () => {
  const relay = (chunks: string[]) => {
    const parser = createRelayParser();
    return [...chunks.flatMap((c) => parser.push(c)), ...parser.end()];
  };

  it('gives the same events whatever the chunking, keeping comments, ids and retry for the relay', () => {
    const text = ': hi\r\nevent: message\r\nid: 7\r\nretry: 10\r\ndata: {"a":\r\ndata: 1}\r\n\r\n:keep-alive\n\ndata: x\rdata: y\r\r';
    const whole = relay([text]);
    expect(whole).toEqual([{ comments: [' hi'], event: 'message', id: '7', retry: '10', data: '{"a":\n1}' }, { comments: ['keep-alive'] }, { data: 'x\ny' }]);
    for (let cut = 1; cut < text.length; cut++) expect(relay([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    expect(relay([...text])).toEqual(whole);
    expect(whole.map(formatSseEvent).join('')).toBe(': hi\nevent: message\nid: 7\nretry: 10\ndata: {"a":\ndata: 1}\n\n:keep-alive\n\ndata: x\ndata: y\n\n');
  });

  it('dispatches a last event the stream ended without a blank line', () => {
    expect(relay(['data: one\n\ndata: tw', 'o'])).toEqual([{ data: 'one' }, { data: 'two' }]);
  });
});

describe('createLineSplitter', () => {
  it('puts a long line back together from many small chunks, line ends of every kind between them', () => {
    const long = 'x'.repeat(300_000);
    const text = `${long}\r\n${long}\r${long}\n\n`;
    const splitter = createLineSplitter();
    const lines: string[] = [];
    for (let i = 0; i < text.length; i += 1024) lines.push(...splitter.push(text.slice(i, i + 1024)));
    expect(lines.map((l) => l.length)).toEqual([long.length, long.length, long.length, 0]);
    expect(splitter.end()).toBeUndefined();
    expect(splitter.push('tail')).toEqual([]);
    expect(splitter.end()).toBe('tail');
  });

  it('gives the same lines whatever the mix of line ends and wherever the text is cut', () => {
    const text = 'a\r\nb\rc\n\r\n\rd\n\ne\r\r\nf';
    const expected = text.split(/\r\n|\r|\n/);
    const last = expected.pop();
    for (let cut = 0; cut <= text.length; cut++) {
      for (let cut2 = cut; cut2 <= text.length; cut2++) {
        const splitter = createLineSplitter();
        const lines = [...splitter.push(text.slice(0, cut)), ...splitter.push(text.slice(cut, cut2)), ...splitter.push(text.slice(cut2))];
        expect({ cut, cut2, lines, rest: splitter.end() }).toEqual({ cut, cut2, lines: expected, rest: last });
      }
    }
  });

  it('reads many LF lines before one CR in a single search each (no rescan per line)', () => {
    const text = `${'ab\n'.repeat(200_000)}end\r`;
    const lines = createLineSplitter().push(text);
    expect(lines).toHaveLength(200_001);
    expect(lines.at(-1)).toBe('end');
  });
});
