/** Pins small pieces of sign-in: cookie reading, the `next` redirect guard, password hashing. */
import { describe, expect, it } from 'vitest';

import { hashPassword, safeNext, verifyPassword } from '../../src/accounts/index.ts';
import { readCookie } from '../../src/http/index.ts';
import { cookieNames } from '../../src/routes/session-auth.ts';

describe('readCookie', () => {
  it.each([
    ['a=1; plaza_session=sess_abc; b=2', 'plaza_session', 'sess_abc'],
    ['plaza_session="quoted"', 'plaza_session', 'quoted'],
    ['x_plaza_session=no', 'plaza_session', undefined],
    ['plaza_session=%E0%A4%A', 'plaza_session', undefined],
    [undefined, 'plaza_session', undefined],
  ])('%s → %s', (header, name, expected) => {
    expect(readCookie(header, name)).toBe(expected);
  });

  it('uses __Host- names over HTTPS', () => {
    expect(cookieNames(true).session).toBe('__Host-plaza_session');
    expect(cookieNames(false).session).toBe('plaza_session');
  });
});

describe('safeNext', () => {
  it.each([
    ['/account', '/account'],
    ['/a?b=c', '/a?b=c'],
    ['//evil.example', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example', '/'],
    ['javascript:alert(1)', '/'],
    ['', '/'],
    [undefined, '/'],
  ])('%s → %s', (value, expected) => {
    expect(safeNext(value)).toBe(expected);
  });
});

describe('passwords', () => {
  it('verifies the right password only, and never a malformed hash', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
    expect(await verifyPassword('x', 'plain')).toBe(false);
    expect(await hashPassword('correct horse battery')).not.toBe(hash);
  });
});
