/**
 * Pins the size guard of the stdio bridge's notification stream: events end at an empty line
 * whatever the line ends (LF, CRLF, CR, also split between reads), so any number of ordinary
 * events passes, and one event that never ends is refused once it passes the limit.
 */
import { describe, expect, it } from 'vitest';

import { eventSizeGuard } from '../../src/cli/mcp-bridge-fetch.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('eventSizeGuard', () => {
  it('lets through any number of events, each under the limit, whatever their line ends', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const check = eventSizeGuard(64);
      const event = `event: message${eol}data: ${'x'.repeat(30)}${eol}${eol}`;
      for (let i = 0; i < 100; i++) check(bytes(event));
    }
  });

  it('sees an event end when its CRLF CRLF is split between reads', () => {
    const check = eventSizeGuard(64);
    for (let i = 0; i < 50; i++) {
      check(bytes(`data: ${'y'.repeat(40)}\r`));
      check(bytes('\n\r'));
      check(bytes('\n'));
    }
  });

  it('throws once one event passes the limit, across reads and without a line end', () => {
    const check = eventSizeGuard(64);
    check(bytes('data: '));
    check(bytes('z'.repeat(50)));
    expect(() => check(bytes('z'.repeat(20)))).toThrow(/exceeds 64 bytes/);
    const lines = eventSizeGuard(64);
    // Many short lines without the empty one are still one event.
    expect(() => {
      for (let i = 0; i < 20; i++) lines(bytes('data: a\n'));
    }).toThrow(/exceeds 64 bytes/);
  });

  it('throws where a byte-by-byte count throws, whatever the reads and line ends', () => {
    // The count as it was, byte by byte in JavaScript: the reference.
    const reference = (max: number) => {
      let eventBytes = 0;
      let lineBytes = 0;
      let afterCr = false;
      return (chunk: Uint8Array) => {
        for (const byte of chunk) {
          eventBytes++;
          if (byte === 0x0a && afterCr) {
            afterCr = false;
            continue;
          }
          afterCr = byte === 0x0d;
          if (byte === 0x0a || byte === 0x0d) {
            if (lineBytes === 0) eventBytes = 0;
            lineBytes = 0;
          } else lineBytes++;
        }
        if (eventBytes > max) throw new Error('over');
      };
    };
    /** The index of the read that throws, or -1. */
    const throwsAt = (check: (chunk: Uint8Array) => void, chunks: Uint8Array[]) =>
      chunks.findIndex((chunk) => {
        try {
          check(chunk);
          return false;
        } catch {
          return true;
        }
      });
    let seed = 11;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const pieces = ['\n', '\r', '\r\n', 'data: x', 'yy', '', 'z'.repeat(30)];
    let thrown = 0;
    for (let stream = 0; stream < 300; stream++) {
      const all = bytes(Array.from({ length: 40 }, () => pieces[random(pieces.length)]).join(''));
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < all.length;) {
        const size = 1 + random(12);
        chunks.push(all.subarray(at, at + size));
        at += size;
      }
      const max = 20 + random(300);
      const expected = throwsAt(reference(max), chunks);
      if (expected !== -1) thrown++;
      expect(throwsAt(eventSizeGuard(max), chunks), `stream ${stream}, max ${max}`).toBe(expected);
    }
    // Both outcomes were tried.
    expect(thrown).toBeGreaterThan(30);
    expect(thrown).toBeLessThan(270);
  });
});
