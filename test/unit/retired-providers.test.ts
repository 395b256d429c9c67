/**
 * Pins who may list a server under the slug of a removed listing: a listing of the same URL only,
 * and of an account's listing only that account; an anonymous or discovered one's slug is open to
 * anyone listing that URL, as its live listing was.
 */
import { describe, expect, it } from 'vitest';

import { mayTakeRetired } from '../../src/marketplace/retired-providers.ts';

const URL_A = 'https://crm.example.com/mcp';
const URL_B = 'https://evil.example.com/mcp';

describe('mayTakeRetired', () => {
  it.each([
    ['the owner, same URL', 'acc_1', URL_A, 'acc_1', true],
    ['the owner, another URL', 'acc_1', URL_B, 'acc_1', false],
    ['another account, same URL', 'acc_1', URL_A, 'acc_2', false],
    ['anonymous, same URL of an account', 'acc_1', URL_A, null, false],
    ['anyone, same URL of an anonymous listing', null, URL_A, 'acc_2', true],
    ['anonymous, same URL of an anonymous listing', null, URL_A, null, true],
    ['anyone, another URL of an anonymous listing', null, URL_B, null, false],
  ] as const)('%s', (_, owner, url, caller, expected) => {
    expect(mayTakeRetired({ provider: 'crm', url: URL_A, accountId: owner }, url, caller)).toBe(expected);
  });
});
