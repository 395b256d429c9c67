/** Pins the reading of an upstream's `Retry-After`: delta-seconds and RFC 9110's three HTTP-date forms, nothing else. */
import { describe, expect, it } from 'vitest';

import { parseRetryAfter } from '../../src/chat/retry-after.ts';

// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's own example.
const NOW = Date.UTC(1994, 10, 6, 8, 49, 37);

describe('parseRetryAfter', () => {
  it.each([
    ['delta-seconds', '120', 120],
    ['delta-seconds with spaces around', ' 7 ', 7],
    ['fractional seconds, rounded up', '2.5', 3],
    ['zero', '0', 0],
    ['an exponent', '1e3', 1000],
    ['a number too large for a double', '9'.repeat(400), Number.MAX_SAFE_INTEGER],
    ['an IMF-fixdate', 'Sun, 06 Nov 1994 08:51:37 GMT', 120],
    ['an obsolete RFC 850 date', 'Sunday, 06-Nov-94 08:50:37 GMT', 60],
    ['an asctime date', 'Sun Nov  6 08:49:47 1994', 10],
    ['a date already past', 'Sat, 05 Nov 1994 08:49:37 GMT', 0],
  ])('reads %s', (_name, header, seconds) => {
    expect(parseRetryAfter(header, NOW)).toBe(seconds);
  });

  it.each([
    ['no header', undefined],
    ['words', 'soon'],
    ['a negative number', '-5'],
    ['hexadecimal', '0x10'],
    ['infinity', 'Infinity'],
    ['a date without its zone', 'Sun, 06 Nov 1994 08:51:37'],
    ['a date in another zone', 'Sun, 06 Nov 1994 08:51:37 +0100'],
    ['an impossible day', 'Wed, 31 Feb 1994 08:51:37 GMT'],
    ['an impossible hour', 'Sun, 06 Nov 1994 25:51:37 GMT'],
    ['a very long value', `Sun, 06 Nov 1994 08:51:37 GMT${' '.repeat(100)}x`],
  ])('refuses %s', (_name, header) => {
    expect(parseRetryAfter(header, NOW)).toBeUndefined();
  });

  it('puts a two-digit year more than 50 years ahead into the past century', () => {
    const in2030 = Date.UTC(2030, 0, 1);
    expect(parseRetryAfter('Tuesday, 01-Jan-30 00:01:00 GMT', in2030)).toBe(60);
    // 2094 would be 64 years ahead: it is 1994, long past.
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:50:37 GMT', in2030)).toBe(0);
  });
});
