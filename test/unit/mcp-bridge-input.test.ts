/**
 * Pins how the stdio bridge reads its client's lines: what is passed on (unknown top-level members
 * left off), what is refused and under which id it is answered (none for a response), and how
 * lines are split (CRLF, a last line without a line end, a line past the limit skipped while
 * reading goes on).
 */
import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { readClientLine, readLines } from '../../src/cli/mcp-bridge-input.ts';

describe('readClientLine', () => {
  it.each([
    ['a request', '{"jsonrpc":"2.0","id":1,"method":"ping"}', { jsonrpc: '2.0', id: 1, method: 'ping' }, []],
    [
      'a notification',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [],
    ],
    [
      'a response of the client',
      '{"jsonrpc":"2.0","id":"s1","result":{}}',
      { jsonrpc: '2.0', id: 's1', result: {} },
      [],
    ],
    [
      'a request with a member JSON-RPC does not name',
      '{"jsonrpc":"2.0","id":5,"method":"ping","extra":1}',
      { jsonrpc: '2.0', id: 5, method: 'ping' },
      ['extra'],
    ],
    [
      'params as an array (the gateway judges them)',
      '{"jsonrpc":"2.0","id":2,"method":"x","params":[1]}',
      { jsonrpc: '2.0', id: 2, method: 'x', params: [1] },
      [],
    ],
  ])('passes on %s', (_what, line, message, dropped) => {
    expect(readClientLine(line)).toEqual({ kind: 'message', message, dropped });
  });

  it.each([
    ['a line that is not JSON', '{"jsonrpc":', null, -32700, /not JSON/],
    ['JSON that is no object', '42', null, -32600, /not a JSON-RPC message/],
    ['an empty batch', '[]', null, -32600, /empty batch/],
    ['a request id null', '{"jsonrpc":"2.0","id":null,"method":"ping"}', null, -32600, /never null/],
    ['a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', 1.5, -32600, /neither a string nor an integer/],
    ['an object as id', '{"jsonrpc":"2.0","id":{},"method":"ping"}', null, -32600, /neither a string nor an integer/],
    ['another jsonrpc version', '{"jsonrpc":"1.0","id":7,"method":"ping"}', 7, -32600, /"jsonrpc" must be "2.0"/],
    ['a method that is no string', '{"jsonrpc":"2.0","id":8,"method":1}', 8, -32600, /"method" must be a string/],
    [
      'params that are neither object nor array',
      '{"jsonrpc":"2.0","id":9,"method":"x","params":"bar"}',
      9,
      -32600,
      /"params" must be/,
    ],
  ])('refuses %s, answering under the id it could read', (_what, line, id, code, message) => {
    const read = readClientLine(line);
    expect(read).toMatchObject({
      kind: 'refused',
      answer: { jsonrpc: '2.0', id, error: { code, message: expect.stringMatching(message) } },
    });
  });

  it('answers a request id past 2^53 under the digits as written', () => {
    const read = readClientLine('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}');
    expect(read?.kind).toBe('refused');
    const answer = read?.kind === 'refused' ? read.answer : undefined;
    expect(JSON.stringify(answer)).toMatch(
      /^\{"jsonrpc":"2\.0","id":9007199254740993,"error":\{"code":-32600,"message":"Invalid Request: the request id 9007199254740993 is past 2\^53 - 1/,
    );
  });

  it('refuses a malformed response of the client without answering it', () => {
    expect(readClientLine('{"jsonrpc":"2.0","id":null,"result":{}}')).toEqual({
      kind: 'refused',
      why: expect.stringMatching(/answers no request/),
    });
    expect(readClientLine('{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}')).toEqual({
      kind: 'refused',
      why: expect.stringMatching(/both/),
    });
  });

  it('reads a batch element by element, and skips blank lines', () => {
    const read = readClientLine(
      '[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":null,"method":"ping"}]',
    );
    expect(read).toMatchObject({
      kind: 'batch',
      items: [
        { kind: 'message', message: { id: 3 } },
        { kind: 'refused', answer: { id: null } },
      ],
    });
    expect(readClientLine('  ')).toBeUndefined();
  });
});

describe('readLines', () => {
  function collect(max: number) {
    const input = new PassThrough();
    const seen: string[] = [];
    let ended = false;
    readLines(input, {
      onLine: (line) => seen.push(line),
      onOversize: () => seen.push('<oversize>'),
      onEnd: () => (ended = true),
      maxLineBytes: max,
    });
    return { input, seen, ended: () => ended };
  }

  it('splits on LF and CRLF, across reads, and reads a last line without a line end', async () => {
    const { input, seen, ended } = collect(100);
    input.write('one\r\ntw');
    input.write('o\nthree');
    input.end();
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['one', 'two', 'three']);
    expect(ended()).toBe(true);
  });

  it('skips a line past the limit to its end, once reported, and goes on reading', async () => {
    const { input, seen } = collect(10);
    input.write('short\n');
    input.write('x'.repeat(8));
    input.write('x'.repeat(8));
    input.write('x'.repeat(8));
    input.write('x\nafter\n');
    input.write(`${'y'.repeat(11)}\nend\n`);
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['short', '<oversize>', 'after', '<oversize>', 'end']);
  });

  it('reads a line of 10 MiB that comes in 64 KiB pieces in time linear in its size', async () => {
    // Joined and searched again at every piece, such a line took 7.5 s (and a line just past the
    // limit as long before it was refused): quadratic in its pieces. Timed against a line 16 times
    // shorter in the same run, so a loaded machine slows both alike: linear reading takes ~16 times
    // as long, quadratic ~256 times (a short run under 5 ms counts as 5: timer noise).
    const piece = Buffer.alloc(64 * 1024, 0x61);
    const read = async (max: number): Promise<number> => {
      const { input, seen } = collect(max);
      const started = performance.now();
      for (let i = 0; i < max / piece.length - 1; i++) input.write(piece);
      input.write('\n{"after":1}\n');
      for (let i = 0; i < max / piece.length + 1; i++) input.write(piece);
      input.write('\nend\n');
      await new Promise((r) => setImmediate(r));
      const elapsed = performance.now() - started;
      expect(seen.map((line) => (line.length > 100 ? line.length : line))).toEqual([
        max - piece.length,
        '{"after":1}',
        '<oversize>',
        'end',
      ]);
      return elapsed;
    };
    const MiB = 1024 * 1024;
    const short = Math.min(await read(0.625 * MiB), await read(0.625 * MiB));
    const long = await read(10 * MiB);
    expect(long / Math.max(short, 5)).toBeLessThan(64);
  });
});
