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
});
