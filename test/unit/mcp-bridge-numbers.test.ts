/**
 * Pins that the stdio bridge passes numbers through as written, both ways: what its client sends
 * (read with parseLossless, re-serialised by the SDK's transport with JSON.stringify), and what
 * the gateway answers (marked for the SDK's JSON.parse, written back by serialise), over JSON
 * bodies and event streams split anywhere.
 */
import { describe, expect, it } from 'vitest';

import { readClientLine } from '../../src/cli/mcp-bridge-input.ts';
import {
  keepsValue,
  markEventStream,
  markJsonBody,
  markNumbers,
  parseLossless,
  serialise,
} from '../../src/cli/mcp-bridge-numbers.ts';
import { gatewayAnswers } from '../../src/cli/mcp-bridge-refusal.ts';

const BIG =
  '{"a":9007199254740993,"b":-12345678901234567890,"c":0.12345678901234567891,"d":1e400,"e":[18446744073709551615],"small":42,"f":1.5,"g":1.0,"h":2e3}';

/** `text` through `stream`, cut into chunks of `size` bytes. */
async function through(stream: TransformStream<Uint8Array, Uint8Array>, text: string, size: number): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.subarray(i, i + size));
      controller.close();
    },
  });
  return new Response(source.pipeThrough(stream)).text();
}

describe('numbers through the bridge', () => {
  it('tells a number JSON.parse changes from one it only writes otherwise', () => {
    expect(keepsValue('9007199254740993', Number('9007199254740993'))).toBe(false);
    expect(keepsValue('9007199254740992', 9007199254740992)).toBe(true);
    expect(keepsValue('1.0', 1)).toBe(true);
    expect(keepsValue('2e3', 2000)).toBe(true);
    expect(keepsValue('1.5E+300', 1.5e300)).toBe(true);
    expect(keepsValue('1e400', Infinity)).toBe(false);
    expect(keepsValue('1e-400', 0)).toBe(false);
    expect(keepsValue('0.12345678901234567891', Number('0.12345678901234567891'))).toBe(false);
  });

  it("re-serialises the client's message with every number as written", () => {
    expect(JSON.stringify(parseLossless(BIG))).toBe(
      '{"a":9007199254740993,"b":-12345678901234567890,"c":0.12345678901234567891,"d":1e400,"e":[18446744073709551615],"small":42,"f":1.5,"g":1,"h":2000}',
    );
    const read = readClientLine(
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":${BIG}}}`,
    );
    expect(read).toMatchObject({ kind: 'message' });
    expect(JSON.stringify((read as { message: unknown }).message)).toContain(
      '"arguments":{"a":9007199254740993,"b":-12345678901234567890,"c":0.12345678901234567891,"d":1e400,"e":[18446744073709551615]',
    );
  });

  it("passes a client's response to a request of the gateway's on under an id past 2^53, numbers as written", () => {
    const read = readClientLine('{"jsonrpc":"2.0","id":9007199254740993,"result":{"n":9007199254740995}}');
    expect(read).toMatchObject({ kind: 'message' });
    expect(JSON.stringify((read as { message: unknown }).message)).toBe(
      '{"jsonrpc":"2.0","id":9007199254740993,"result":{"n":9007199254740995}}',
    );
  });

  it('refuses params that are a number, however large', () => {
    expect(readClientLine('{"jsonrpc":"2.0","id":1,"method":"ping","params":90071992547409931}')).toMatchObject({
      kind: 'refused',
      why: '"params" must be an object or an array',
    });
  });

  it("writes the gateway's numbers back as they came, after a parse that rounds them", () => {
    const answer = `{"jsonrpc":"2.0","id":3,"result":{"structuredContent":${BIG}}}`;
    // What the SDK's transport does with the body: JSON.parse; then the bridge writes the message.
    const written = serialise(JSON.parse(markNumbers(answer)));
    expect(
      JSON.parse(written, (_k, v, context?: { source?: string }) => (typeof v === 'number' ? context!.source : v))
        .result.structuredContent,
    ).toEqual({
      a: '9007199254740993',
      b: '-12345678901234567890',
      c: '0.12345678901234567891',
      d: '1e400',
      e: ['18446744073709551615'],
      small: '42',
      f: '1.5',
      g: '1',
      h: '2000',
    });
    // Text with no such number is left as it is, byte for byte.
    expect(markNumbers('{"a":1.0,  "b":"x"}')).toBe('{"a":1.0,  "b":"x"}');
  });

  it("keeps the gateway's numbers in an error it refused with (HTTP 4xx)", () => {
    const [answer] = gatewayAnswers(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no","data":{"n":9007199254740993}}}',
    );
    expect(serialise(answer)).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no","data":{"n":9007199254740993}}}',
    );
  });

  it.each([1, 3, 7, 1000])(
    'marks the numbers of an event stream cut into chunks of %i bytes, leaving other events as they came',
    async (size) => {
      const first =
        ': keep-alive\r\n\r\nid: 1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"n":9007199254740993}}}\n\n';
      const plain = 'id: 2\r\ndata: {"jsonrpc":"2.0","id":2,"result":{"n":1.0}}\r\n\r\n';
      const split = 'id: 3\rdata: {"jsonrpc":"2.0","id":3,\rdata: "result":{"n":12345678901234567890}}\r\r';
      const out = await through(markEventStream(), first + plain + split, size);
      const events = out.split(/\r\n\r\n|\n\n|\r\r/).filter(Boolean);
      expect(events).toHaveLength(4);
      expect(events[0]).toBe(': keep-alive');
      expect(events[2]).toBe(plain.replace(/\r\n\r\n$/, ''));
      const data = (event: string) => serialise(JSON.parse(/^data: (.*)$/m.exec(event)![1]!));
      expect(events[1]).toMatch(/^id: 1\nevent: message\ndata: /);
      expect(data(events[1]!)).toBe(
        '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"n":9007199254740993}}}',
      );
      expect(events[3]).toMatch(/^id: 3\rdata: /);
      expect(data(events[3]!)).toBe('{"jsonrpc":"2.0","id":3,"result":{"n":12345678901234567890}}');
    },
  );

  it('passes an event stream on the same whatever reads it came in', async () => {
    // Seeded: the same streams each run. Events of every kind of line end (a CR alone, CRLF cut
    // between reads), comments, data on several lines, numbers to mark, characters of 2 to 4 bytes.
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const pick = <T>(list: T[]): T => list[random(list.length)]!;
    const event = () => {
      const eol = pick(['\n', '\r\n', '\r']);
      const value = pick(['9007199254740993', '1.5', '"é🙂"', '12345678901234567890', '"x"']);
      const lines = [
        pick(['', ': keep-alive', 'id: 4']),
        'event: message',
        `data: {"jsonrpc":"2.0","id":1,`,
        `data: "result":{"n":${value}}}`,
      ].filter(Boolean);
      return `${lines.join(eol)}${eol}${eol}`;
    };
    for (let stream = 0; stream < 20; stream++) {
      const text =
        Array.from({ length: 1 + random(6) }, event).join('') + pick(['', 'data: {"tail":9007199254740993}']);
      const whole = await through(markEventStream(), text, text.length + 1);
      for (const size of [1, 2, 3, 4, 5, 9, 64])
        expect(await through(markEventStream(), text, size), `stream ${stream} in reads of ${size}`).toBe(whole);
    }
  });

  it('marks the numbers of a JSON body cut into chunks', async () => {
    const out = await through(markJsonBody(), `[{"jsonrpc":"2.0","id":1,"result":{"n":9007199254740993}}]`, 5);
    expect(serialise(JSON.parse(out))).toBe('[{"jsonrpc":"2.0","id":1,"result":{"n":9007199254740993}}]');
  });
});
