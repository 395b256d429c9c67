/**
 * Pins clear 4xx answers of the package source routes (issue 8): non-https URIs, a 63-character
 * sha256, a loopback URI without PLAZA_ALLOW_PRIVATE_TARGETS, oversized fields and bodies,
 * unknown fields, wrong types, bad list queries, unknown ids — never a 5xx, always the website
 * error shape naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const good = {
  package_id: 'com.example.tool',
  name: 'Tool',
  version: '1.2.3',
  summary: 'Does things.',
  vendor_name: 'Example Inc',
  download_uri: 'https://downloads.example.com/tool-1.2.3.agpk',
  sha256: 'ab'.repeat(32),
};

describe.each(BACKENDS)('package source bad input on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { PLAZA_RATE_LIMIT_SOURCES_PER_MIN: '1000' } });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  const register = (body: unknown, raw = false) =>
    fetch(`${plaza.url}/api/agpk/sources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: raw ? (body as string) : JSON.stringify(body),
    });

  it('accepts the good body (202, risky-unknown) and returns the same record for a repeat (200)', async () => {
    const first = await register(good);
    expect(first.status).toBe(202);
    const json = (await first.json()) as any;
    expect(json).toMatchObject({
      status: 'registered',
      created: true,
      source: { trust: 'risky-unknown', sha256: good.sha256, package_id: good.package_id },
    });
    expect(first.headers.get('location')).toBe(`/api/agpk/sources/${json.source.id}`);
    const again = await register({ ...good, sha256: good.sha256.toUpperCase() });
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).source.id).toBe(json.source.id);
  });

  it.each([
    ['an http URI', { download_uri: 'http://downloads.example.com/t.agpk' }, 'download_uri', /https/],
    ['an ftp URI', { download_uri: 'ftp://downloads.example.com/t.agpk' }, 'download_uri', /https/],
    ['not a URL', { download_uri: 'downloads.example.com/t.agpk' }, 'download_uri', /https/],
    [
      'credentials in the URI',
      { download_uri: 'https://u:p@downloads.example.com/t.agpk' },
      'download_uri',
      /user:password/,
    ],
    ['a loopback URI', { download_uri: 'https://127.0.0.1:8443/t.agpk' }, 'download_uri', /loopback/],
    ['a localhost URI', { download_uri: 'https://localhost/t.agpk' }, 'download_uri', /loopback/],
    ['a private URI', { download_uri: 'https://10.1.2.3/t.agpk' }, 'download_uri', /private/],
    ['a metadata URI', { download_uri: 'https://169.254.169.254/latest' }, 'download_uri', /metadata/],
    ['a 63-character sha256', { sha256: 'a'.repeat(63) }, 'sha256', /64 hexadecimal/],
    ['a 65-character sha256', { sha256: 'a'.repeat(65) }, 'sha256', /64 hexadecimal/],
    ['a non-hex sha256', { sha256: 'g'.repeat(64) }, 'sha256', /64 hexadecimal/],
    ['a huge name', { name: 'n'.repeat(201) }, 'name', /at most 200/],
    ['a huge summary', { summary: 's'.repeat(2_001) }, 'summary', /at most 2000/],
    [
      'a huge URI',
      { download_uri: `https://downloads.example.com/${'x'.repeat(2_048)}` },
      'download_uri',
      /at most 2048/,
    ],
    ['a bad package_id', { package_id: '../etc/passwd' }, 'package_id', /letters, digits/],
    ['a bad version', { version: '1.0 beta' }, 'version', /letters, digits/],
    ['an empty vendor', { vendor_name: '  ' }, 'vendor_name', /empty/],
    ['a number for name', { name: 42 }, 'name', /string/i],
    ['control characters', { name: 'a\u0000b' }, 'name', /control/],
    ['a lone surrogate', { vendor_name: 'a\ud800b' }, 'vendor_name', /lone surrogate/],
  ])('refuses %s', async (_what, over, param, message) => {
    const res = await register({ ...good, ...over });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ success: false, code: 'bad_request' });
    expect(body.request_id).toBeTruthy();
    expect(body.message).toContain(param);
    expect(body.message).toMatch(message);
  });

  it('refuses unknown fields and missing ones', async () => {
    const unknown = await register({ ...good, package_file: 'base64…' });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).message).toMatch(/unknown field\(s\): package_file/);
    const { sha256: _dropped, ...missing } = good;
    const res = await register(missing);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).message).toMatch(/sha256/);
  });

  it('refuses malformed JSON, non-JSON and oversized bodies', async () => {
    expect((await register('{"package_id":', true)).status).toBe(400);
    expect((await register('[]', true)).status).toBe(400);
    const text = await fetch(`${plaza.url}/api/agpk/sources`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(text.status).toBe(415);
    const huge = await register({ ...good, summary: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
  });

  it('needs a signed-in user on /tool', async () => {
    const res = await fetch(`${plaza.url}/api/agpk/sources/tool`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(good),
    });
    expect(res.status).toBe(401);
    const badKey = await fetch(`${plaza.url}/api/agpk/sources/tool`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer plz_nope' },
      body: JSON.stringify(good),
    });
    expect(badKey.status).toBe(401);
  });

  it.each([
    ['status=unknown'],
    ['trust=trusted'],
    ['limit=0'],
    ['limit=101'],
    ['limit=abc'],
    ['cursor=not-a-cursor'],
    // Well-formed, but a time no Date can hold (was a 500).
    [`cursor=${Buffer.from(JSON.stringify([9_000_000_000_000_000, 'src_a'])).toString('base64url')}`],
    [`cursor=${Buffer.from(JSON.stringify([-9_000_000_000_000_000, 'src_a'])).toString('base64url')}`],
    ['colour=red'],
  ])('refuses the list query %s', async (query) => {
    const res = await fetch(`${plaza.url}/api/agpk/sources?${query}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).success).toBe(false);
  });

  it('answers 404 for an unknown source id', async () => {
    const res = await fetch(`${plaza.url}/api/agpk/sources/src_doesnotexist`);
    expect(res.status).toBe(404);
  });

  it('rate limits anonymous registrations per client', async () => {
    const limited = await startTestPlaza(backend, { env: { PLAZA_RATE_LIMIT_SOURCES_PER_MIN: '2' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(
          (
            await fetch(`${limited.url}/api/agpk/sources`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ ...good, version: `1.0.${i}` }),
            })
          ).status,
        );
      }
      expect(statuses).toEqual([202, 202, 429]);
    } finally {
      await limited.close();
    }
  });
});
