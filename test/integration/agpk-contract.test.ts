/**
 * The AGPK v1 contract files (spec §4.5, §9) served under /agpk/v1/: content types, strong ETags
 * with 304 revalidation, the manifest schema's fixed agpk_version, a first-party catalog that
 * matches its own catalog schema, and a clear 404 for unknown files.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe.each(BACKENDS)('GET /agpk/v1/* on %s', (backend) => {
  let plaza: TestPlaza;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend);
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it.each([
    ['schema.json', 'application/schema+json; charset=utf-8'],
    ['agent-commands.schema.json', 'application/schema+json; charset=utf-8'],
    ['catalog.schema.json', 'application/schema+json; charset=utf-8'],
    ['firstparty-catalog.json', 'application/json; charset=utf-8'],
    ['builder-standard.md', 'text/markdown; charset=utf-8'],
    ['sdk.md', 'text/markdown; charset=utf-8'],
  ])('serves %s as %s with a strong ETag', async (file, type) => {
    const res = await fetch(`${plaza.url}/agpk/v1/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect((await res.text()).length).toBeGreaterThan(200);
    const again = await fetch(`${plaza.url}/agpk/v1/${file}`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
  });

  it('publishes a 2020-12 manifest schema with agpk_version "1.0" and open additional properties', async () => {
    const schema = (await (await fetch(`${plaza.url}/agpk/v1/schema.json`)).json()) as Record<string, any>;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.properties.agpk_version).toEqual({ const: '1.0' });
    expect(schema.required).toEqual(['agpk_version', 'id', 'name', 'version']);
    expect(schema.additionalProperties).toBe(true);
  });

  it('serves a first-party catalog that validates against catalog.schema.json', async () => {
    const catalog = (await (await fetch(`${plaza.url}/agpk/v1/firstparty-catalog.json`)).json()) as {
      packages: Array<{ package_id: string }>;
    };
    const schema = (await (await fetch(`${plaza.url}/agpk/v1/catalog.schema.json`)).json()) as object;
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(catalog), JSON.stringify(validate.errors)).toBe(true);
    expect(catalog.packages.length).toBeGreaterThan(0);
    for (const p of catalog.packages) expect(p.package_id).toMatch(/\S/);
  });

  it('answers 404 in the website error shape for an unknown file', async () => {
    const res = await fetch(`${plaza.url}/agpk/v1/secrets.json`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      success: false,
      code: 'not_found',
      message: expect.stringContaining('No AGPK contract file secrets.json'),
    });
  });
});
