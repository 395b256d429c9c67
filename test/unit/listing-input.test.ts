/**
 * Pins the listing edge: what counts as a secret in a listing, which URLs are one listing, and how
 * search words become a tsquery.
 */
import { describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/kernel/index.ts';
import { assertNoSecrets, normaliseListingUrl, toTsQuery } from '../../src/marketplace/index.ts';

const check =
  (url: string, summary = 'A plain summary.') =>
  () =>
    assertNoSecrets(new URL(url), { summary });

describe('normaliseListingUrl', () => {
  it.each([
    ['HTTPS://Example.COM:443/mcp', 'https://example.com/mcp'],
    ['https://example.com/mcp?', 'https://example.com/mcp'],
    ['https://example.com/mcp#tools', 'https://example.com/mcp'],
    ['https://example.com./mcp', 'https://example.com/mcp'],
    ['https://example.com/%6D%63p', 'https://example.com/mcp'],
    ['https://example.com/a%2fb/%7e?q=%6a%2f', 'https://example.com/a%2Fb/~?q=j%2F'],
    ['https://example.com/x/../mcp', 'https://example.com/mcp'],
    ['http://2130706433./mcp', 'http://127.0.0.1/mcp'],
  ])('writes %s as %s', (raw, normal) => {
    expect(normaliseListingUrl(raw).href).toBe(normal);
  });

  it('keeps a trailing slash and the query: servers may tell those apart', () => {
    expect(normaliseListingUrl('https://example.com/mcp/?region=eu').href).toBe('https://example.com/mcp/?region=eu');
  });
});

describe('assertNoSecrets', () => {
  it.each([
    'https://u:p@x.example/mcp',
    'https://x.example/mcp?token=a',
    'https://x.example/mcp?api_key=a',
    'https://x.example/mcp?apiKey=a',
    'https://x.example/mcp?key=a',
    'https://x.example/mcp?client_secret=a',
    'https://x.example/mcp?password=a',
    'https://x.example/mcp?auth=a',
    'https://x.example/mcp?sig=a',
    'https://x.example/servers/ghp_abcdefghijklmnopqrstuvwxyz0123456789/mcp',
    'https://x.example/mcp/sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX',
    'https://x.example/u/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop/mcp',
    'https://x.example/k/%41KIAABCDEFGHIJKLMNOP/mcp',
    'https://x.example/servers/plz_0a1b2c3d4e5f6_0a1b2c3d4e5f6g7h8j9k0m1n2p3q4r5s6t7v8w9x0y/mcp',
  ])('refuses the URL %s', (url) => {
    expect(check(url)).toThrow(ValidationError);
  });

  it.each([
    'https://x.example/mcp',
    'https://x.example/mcp?region=eu&monkey=1',
    'https://x.example/mcp?keyboard=1',
    'https://x.example/tokens/mcp',
    'https://x.example/%E0%A4%A/mcp',
  ])('accepts the URL %s', (url) => {
    expect(check(url)).not.toThrow();
  });

  it.each([
    'Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456',
    'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop',
    'use ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    'AKIAABCDEFGHIJKLMNOP',
    'api_key=abcd1234efgh5678',
    '-----BEGIN RSA PRIVATE KEY-----',
    'key plz_0a1b2c3d4e5f6_0a1b2c3d4e5f6g7h8j9k0m1n2p3q4r5s6t7v8w9x0y',
    'agt_0a1b2c3d4e5f6_0a1b2c3d4e5f6g7h8j9k0m1n2p3q4r5s6t7v8w9x0y',
    'sess_0a1b2c3d4e5f6g7h8j9k0m1n2p3q4r5s6t7v8w9x0y0a1b2c3d',
  ])('refuses a summary containing %s, without echoing it', (summary) => {
    let message = '';
    try {
      assertNoSecrets(new URL('https://x.example/mcp'), { summary });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Invalid listing: summary: contains what looks like/);
    expect(message).not.toContain(summary.slice(-10));
  });

  it('accepts placeholders and credential names', () => {
    expect(() =>
      assertNoSecrets(new URL('https://x.example/mcp'), {
        summary: 'Needs Authorization: Bearer <THIRD_PARTY_TOKEN> and an API key.',
      }),
    ).not.toThrow();
  });
});

describe('toTsQuery', () => {
  it.each([
    ['get weather', 'get & weather'],
    ['Get_Weather get', 'get & weather'],
    ["' OR 1=1; DROP TABLE x; --", 'or & 1 & drop & table & x'],
    ['Städte 天気', 'städte & 天気'],
    ['&|!():*', ''],
  ])('turns %j into %j', (q, query) => {
    expect(toTsQuery(q)).toBe(query);
  });

  it('makes prefixes on request', () => {
    expect(toTsQuery('weath fore', true)).toBe('weath:* & fore:*');
  });
});
