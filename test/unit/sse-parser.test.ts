/**
 * The one event-stream parser (src/kernel/sse.ts: line ends of every kind and multi-byte
 * characters cut between chunks, byte-order mark, comments, retry, size limit, the end of a stream
 * mid-event), the line splitter under it, and the two readers on top of it: the prober's
 * (probes/internal/sse.ts, the HTML standard's dispatch rules) and the chat proxy's (data only).
 */
import { describe, expect, it } from 'vitest';

import { createSseParser } from '../../probes/internal/sse.ts';
import { SseParser as ChatSseParser } from '../../src/chat/sse.ts';
import {
  createLineSplitter,
  createSseParser as createKernelParser,
  formatSseEvent,
  SseEventTooLargeError,
} from '../../src/kernel/index.ts';

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
    const text =
      '\uFEFF: hello\r\nevent: message\r\nid: 1\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: other\r\ndata:x\r\n\r\n';
    const whole = all([text]);
    expect(whole).toEqual([
      { event: 'message', data: '{"a":\n1}', id: '1' },
      { event: 'other', data: 'x', id: '1' },
    ]);
    for (let cut = 1; cut < text.length; cut++)
      expect(all([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    expect(all([...text])).toEqual(whole);
  });

  it('skips blocks without data and never dispatches an unfinished one', () => {
    expect(all(['id: 5\n\n', ': keep-alive\n\n', 'retry: 10\n\n', 'data: cut off'])).toEqual([]);
  });

  it('keeps a field without a colon as an empty value and strips one leading space only', () => {
    expect(all(['data\ndata:  two spaces\n\n'])).toEqual([{ event: 'message', data: '\n two spaces', id: undefined }]);
  });
});

describe('the kernel parser (src/kernel/sse.ts)', () => {
  const relay = (chunks: string[], options?: { maxEventLength?: number }) => {
    const parser = createKernelParser(options);
    return [...chunks.flatMap((c) => parser.push(c)), ...parser.end()];
  };

  it('gives the same events whatever the chunking, keeping comments, ids and retry for the relay', () => {
    const text =
      ': hi\r\nevent: message\r\nid: 7\r\nretry: 10\r\ndata: {"a":\r\ndata: 1}\r\n\r\n:keep-alive\n\ndata: x\rdata: y\r\r';
    const whole = relay([text]);
    expect(whole).toEqual([
      { comments: [' hi'], event: 'message', id: '7', retry: '10', data: '{"a":\n1}' },
      { comments: ['keep-alive'] },
      { data: 'x\ny' },
    ]);
    for (let cut = 1; cut < text.length; cut++)
      expect(relay([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    expect(relay([...text])).toEqual(whole);
    expect(whole.map(formatSseEvent).join('')).toBe(
      ': hi\nevent: message\nid: 7\nretry: 10\ndata: {"a":\ndata: 1}\n\n:keep-alive\n\ndata: x\ndata: y\n\n',
    );
  });

  it('reads multi-byte characters cut between chunks, as a streaming decoder hands them on', () => {
    const bytes = new TextEncoder().encode('data: é€😀\r\n\r\ndata: ok\r\r');
    for (let cut = 1; cut < bytes.length; cut++) {
      const decoder = new TextDecoder();
      const parser = createKernelParser();
      const events = [
        ...parser.push(decoder.decode(bytes.subarray(0, cut), { stream: true })),
        ...parser.push(decoder.decode(bytes.subarray(cut), { stream: true })),
        ...parser.push(decoder.decode()),
        ...parser.end(),
      ];
      expect(events, `cut at byte ${cut}`).toEqual([{ data: 'é€😀' }, { data: 'ok' }]);
    }
  });

  it('drops a leading byte-order mark, only the first', () => {
    expect(relay(['', '\uFEFFdata: a\n\n\uFEFFdata: b\n\n'])).toEqual([{ data: 'a' }, {}]);
    expect(relay(['\uFEFF', ': c\n\n'])).toEqual([{ comments: [' c'] }]);
  });

  it('completes at the end of the stream an event missing its blank line, with or without a last line end', () => {
    expect(relay(['data: one\n\ndata: tw', 'o'])).toEqual([{ data: 'one' }, { data: 'two' }]);
    expect(relay(['data: one\n\nid: 2\ndata: two\r\n'])).toEqual([{ data: 'one' }, { id: '2', data: 'two' }]);
    expect(relay(['data: one\n\n'])).toEqual([{ data: 'one' }]);
  });

  it('keeps a field without a colon as an empty value, strips one leading space, ignores unknown fields', () => {
    expect(relay(['data\ndata:  two\nretry\nfoo: bar\nevent:x\n\nfoo\n\n'])).toEqual([
      { data: '\n two', retry: '', event: 'x' },
      {},
    ]);
  });

  it('refuses a line, or an event, past maxEventLength, and holds nothing of it', () => {
    const limit = 1000;
    expect(relay([`data: ${'x'.repeat(994)}\n\n`], { maxEventLength: limit })).toEqual([{ data: 'x'.repeat(994) }]);
    expect(() => relay([`data: ${'x'.repeat(995)}`], { maxEventLength: limit })).toThrow(SseEventTooLargeError);
    const parser = createKernelParser({ maxEventLength: limit });
    expect(() => {
      for (let i = 0; i < 200; i++) parser.push('data: 123456789\n');
    }).toThrow(SseEventTooLargeError);
    const comments = createKernelParser({ maxEventLength: limit });
    expect(() => {
      for (let i = 0; i < 200; i++) comments.push(': keep-alive\n');
    }).toThrow(SseEventTooLargeError);
    // Blank lines between them: every event on its own is within the limit.
    const many = createKernelParser({ maxEventLength: limit });
    for (let i = 0; i < 200; i++) expect(many.push(': keep-alive\ndata: 123456789\n\n')).toHaveLength(1);
  });
});

describe('the chat proxy reader (src/chat/sse.ts)', () => {
  it('passes on only the data of each event, the last one at the end of the body', () => {
    const parser = new ChatSseParser();
    const out: string[] = [];
    parser.push('\uFEFF: OPENROUTER PROCESSING\n\ndata: {"a":1}\n\nevent: x\nid: 1\n\ndata: [DO', out);
    expect(out).toEqual(['{"a":1}']);
    parser.push('NE]', out);
    parser.end(out);
    expect(out).toEqual(['{"a":1}', '[DONE]']);
  });

  it('refuses an event past 4 MiB', () => {
    const parser = new ChatSseParser();
    const line = `data: ${'x'.repeat(1024 * 1024)}\n`;
    expect(() => {
      for (let i = 0; i < 5; i++) parser.push(line, []);
    }).toThrow(SseEventTooLargeError);
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
        const lines = [
          ...splitter.push(text.slice(0, cut)),
          ...splitter.push(text.slice(cut, cut2)),
          ...splitter.push(text.slice(cut2)),
        ];
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
