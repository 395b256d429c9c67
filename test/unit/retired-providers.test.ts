/**
 * Pins who may list a server under the slug of a removed listing: a listing of the same URL, by
 * anyone (the same server, so a credential sent under the slug reaches whom it always did); never
 * a listing of another URL, whoever held the slug.
 */
import { describe, expect, it } from 'vitest';

import { mayTakeRetired } from '../../src/marketplace/retired-providers.ts';

const URL_A = 'https://crm.example.com/mcp';
const URL_B = 'https://evil.example.com/mcp';

describe('mayTakeRetired', () => {
  it.each([
    ['an account-held slug, same URL', 'acc_1', URL_A, true],
    ['an account-held slug, another URL', 'acc_1', URL_B, false],
    ['an anonymous slug, same URL', null, URL_A, true],
    ['an anonymous slug, another URL', null, URL_B, false],
  ] as const)('%s', (_, owner, url, expected) => {
    expect(mayTakeRetired({ provider: 'crm', url: URL_A, accountId: owner }, url)).toBe(expected);
  });
});
