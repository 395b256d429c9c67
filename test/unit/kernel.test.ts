/** Pins the shared kernel: identifiers, request ids, secret hashing, API keys, bearer parsing. */
import { describe, expect, it } from 'vitest';

import { bearerToken, mintApiKey, parseApiKey } from '../../src/accounts/index.ts';
import {
  AuthError,
  digestsEqual,
  hashSecret,
  isWellFormedRequestId,
  newId,
  newRequestId,
} from '../../src/kernel/index.ts';

describe('newId', () => {
  it('is prefixed, URL-safe, unique and sortable by time', () => {
    const a = newId('acc', 1_700_000_000_000);
    const b = newId('acc', 1_700_000_000_001);
    expect(a).toMatch(/^acc_[0-9a-z]+$/);
    expect(a < b).toBe(true);
    const many = new Set(Array.from({ length: 1000 }, () => newId('x')));
    expect(many.size).toBe(1000);
  });
});

describe('request ids', () => {
  it.each(['abc', 'req_1', 'a.b:c-d_e', 'x'.repeat(128)])('accepts %s', (id) =>
    expect(isWellFormedRequestId(id)).toBe(true),
  );
  it.each(['', 'has space', '<script>', 'x'.repeat(129), 'é'])('rejects %j', (id) =>
    expect(isWellFormedRequestId(id)).toBe(false),
  );
  it('generates well-formed ids', () => expect(isWellFormedRequestId(newRequestId())).toBe(true));
});

describe('API keys', () => {
  it('mints keys whose prefix parses back and whose hash matches', () => {
    const key = mintApiKey();
    expect(key.secret.startsWith(`${key.prefix}_`)).toBe(true);
    expect(parseApiKey(key.secret)).toEqual({ prefix: key.prefix });
    expect(digestsEqual(hashSecret(key.secret), key.hash)).toBe(true);
    expect(digestsEqual(hashSecret(`${key.secret}x`), key.hash)).toBe(false);
  });

  it.each(['', 'plz_', 'Bearer x', 'plz_short_secret', 'sk-abcdef'])('does not parse %j', (value) => {
    expect(parseApiKey(value)).toBeUndefined();
  });
});

describe('bearerToken', () => {
  it('extracts the token', () => expect(bearerToken('Bearer abc.def')).toBe('abc.def'));
  it('accepts any case of the scheme', () => expect(bearerToken('bearer abc')).toBe('abc'));
  it.each([undefined, '', 'Basic dXNlcg==', 'Bearer', 'Bearer a b'])('rejects %j', (header) => {
    expect(() => bearerToken(header)).toThrow(AuthError);
  });
});
