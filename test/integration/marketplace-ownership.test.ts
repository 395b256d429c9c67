/**
 * Pins who may change an MCP listing: a listing made with an account API key belongs to that
 * account, which can change it (re-POST or PATCH, answered with the change applied) and remove it
 * (its tools leave the catalog, the search and the gateway's tool list); nobody else can. An
 * anonymous listing sent again with other details is a 409 that says how to change it, never a
 * 200 with the old details; an account listing a URL an anonymous listing holds supersedes it,
 * keeping its slug. A provider slug never moves to another server (the gateway routes credentials
 * by it): not by a supersede, and not after a removal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { createConnectorCatalog } from '../../src/connectors/connector-catalog.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { type FixtureProvider, startFixtureProvider } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const ENV = { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0', MCP_REGISTRY_URL: '' };

const listing = (over: Record<string, unknown> = {}) => ({
  provider: 'vendor',
  url: 'http://127.0.0.1:1/vendor',
  registered_by: 'ops@vendor.example',
  agin_support: true,
  summary: 'Vendor tools. No credentials required.',
  ...over,
});

describe.each(BACKENDS)('MCP listing ownership on %s', (backend) => {
  let plaza: TestPlaza;
  let fixture: FixtureProvider;
  let vendorKey: string;
  let otherKey: string;

  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key) headers['authorization'] = `Bearer ${key}`;
    const res = await fetch(`${plaza.url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const post = (body: unknown, key?: string) => call('POST', '/api/mcp/listings', body, key);
  const waitProbed = async (id: string) => {
    await expect
      .poll(async () => (await call('GET', `/api/mcp/endpoints/${id}`)).body.status, { timeout: 10_000, interval: 50 })
      .not.toBe('registered');
  };

  beforeAll(async () => {
    [plaza, fixture] = await Promise.all([
      startTestPlaza(backend, { env: ENV }),
      startFixtureProvider([
        [{ name: 'vendor_lookup', description: 'Looks a vendor record up.', inputSchema: { type: 'object' } }],
      ]),
    ]);
    const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    vendorKey = (await accounts.createAccount({ email: 'ops@vendor.example' })).apiKey;
    otherKey = (await accounts.createAccount({ email: 'someone@else.example' })).apiKey;
  });
  afterAll(async () => {
    await fixture?.close();
    await plaza?.close();
  });

  describe('POST /api/mcp/listings sent again', () => {
    it('answers 409 saying how to change it when an anonymous listing is sent again with a changed summary', async () => {
      const first = await post(listing({ provider: 'anon-edit', url: 'http://127.0.0.1:1/anon-edit' }));
      expect(first.status).toBe(201);
      const again = await post(
        listing({ provider: 'anon-edit', url: 'http://127.0.0.1:1/anon-edit', summary: 'A new summary.' }),
      );
      expect(again.status).toBe(409);
      expect(again.body.message).toMatch(/already listed.*account API key/s);
      expect((await call('GET', `/api/mcp/endpoints/${first.body.id}`)).body.summary).toBe(
        'Vendor tools. No credentials required.',
      );
      // The same listing sent again unchanged is still the idempotent 200.
      const same = await post(listing({ provider: 'anon-edit', url: 'http://127.0.0.1:1/anon-edit' }));
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ id: first.body.id, created: false, updated: false });
    });

    it("applies the owner's changes and says so; unchanged it answers updated: false", async () => {
      const first = await post(listing({ provider: 'owned-edit', url: 'http://127.0.0.1:1/owned-edit' }), vendorKey);
      expect(first.status).toBe(201);
      expect(first.body.account_owned).toBe(true);
      const changed = await post(
        listing({
          provider: 'owned-edit',
          url: 'http://127.0.0.1:1/owned-edit',
          summary: 'Better words.',
          risk: 'read-only',
        }),
        vendorKey,
      );
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({
        id: first.body.id,
        created: false,
        updated: true,
        summary: 'Better words.',
        risk: 'read-only',
      });
      expect((await call('GET', `/api/mcp/endpoints/${first.body.id}`)).body).toMatchObject({
        summary: 'Better words.',
        risk: 'read-only',
      });
      const same = await post(
        listing({
          provider: 'owned-edit',
          url: 'http://127.0.0.1:1/owned-edit',
          summary: 'Better words.',
          risk: 'read-only',
        }),
        vendorKey,
      );
      expect(same.body).toMatchObject({ created: false, updated: false });
    });

    it('refuses an account-owned URL to anyone else, anonymous or signed in, with 409', async () => {
      const url = 'http://127.0.0.1:1/owned-only';
      expect((await post(listing({ provider: 'owned-only', url }), vendorKey)).status).toBe(201);
      for (const key of [undefined, otherKey]) {
        const res = await post(
          listing({ provider: 'owned-only', url, registered_by: 'someone@else.example', summary: 'Mine now.' }),
          key,
        );
        expect(res.status).toBe(409);
        expect(res.body.message).toMatch(/belongs to a Plaza account/);
      }
      // Even naming the same registrant: registered_by proves nothing.
      expect((await post(listing({ provider: 'owned-only', url, summary: 'Mine now.' }))).status).toBe(409);
    });

    it('answers 401 for an Authorization header that is not a valid account API key', async () => {
      const res = await post(listing({ provider: 'bad-key', url: 'http://127.0.0.1:1/bad-key' }), 'plz_not_a_real_key');
      expect(res.status).toBe(401);
      expect((await call('GET', '/api/mcp/endpoints?provider=bad-key')).body.endpoints).toEqual([]);
    });
  });

  describe('the first-come URL lock', () => {
    it('lets an account-owned listing supersede an anonymous listing of the same URL, under the slug agents already use', async () => {
      const squatter = await post(
        listing({
          provider: 'squat',
          url: fixture.url,
          registered_by: 'squatter@evil.example',
          summary: 'Not really ours.',
        }),
      );
      expect(squatter.status).toBe(201);
      await waitProbed(squatter.body.id);
      // Under another slug it would free `squat` for another server, which agents trust with credentials.
      const renamed = await post(listing({ url: fixture.url }), vendorKey);
      expect(renamed.status).toBe(409);
      expect(renamed.body.message).toMatch(/provider "squat"/);
      expect((await call('GET', `/api/mcp/endpoints/${squatter.body.id}`)).status).toBe(200);

      const vendor = await post(listing({ provider: 'squat', url: fixture.url }), vendorKey);
      expect(vendor.status).toBe(201);
      expect(vendor.body).toMatchObject({
        provider: 'squat',
        registrant: 'ops@vendor.example',
        account_owned: true,
        created: true,
        supersedes: squatter.body.id,
      });
      expect((await call('GET', `/api/mcp/endpoints/${squatter.body.id}`)).status).toBe(404);
      expect((await call('GET', '/api/mcp/endpoints?provider=squat')).body.endpoints.map((e: any) => e.id)).toEqual([
        vendor.body.id,
      ]);
      await waitProbed(vendor.body.id);
      expect((await call('GET', '/api/mcp/tools?q=vendor_lookup')).body.tools.map((t: any) => t.gateway_name)).toEqual([
        'squat__vendor_lookup',
      ]);
      // The anonymous registrant cannot take it back.
      const back = await post(
        listing({
          provider: 'squat',
          url: fixture.url,
          registered_by: 'squatter@evil.example',
          summary: 'Not really ours.',
        }),
      );
      expect(back.status).toBe(409);
    });

    it('never frees the slug of a superseded listing for another server (the reported take-over)', async () => {
      const crm = await post(
        listing({ provider: 'crm', url: 'http://127.0.0.1:1/real-crm', registered_by: 'ops@real-crm.example' }),
      );
      expect(crm.status).toBe(201);
      const takeover = await post(
        listing({ provider: 'crm-x', url: 'http://127.0.0.1:1/real-crm', registered_by: 'someone@else.example' }),
        otherKey,
      );
      expect(takeover.status).toBe(409);
      expect(takeover.body.message).toMatch(/provider "crm"/);
      for (const key of [undefined, otherKey]) {
        const evil = await post(
          listing({ provider: 'crm', url: 'http://127.0.0.1:1/evil-crm', registered_by: 'someone@else.example' }),
          key,
        );
        expect(evil.status).toBe(409);
      }
      expect((await call('GET', '/api/mcp/endpoints?provider=crm')).body.endpoints.map((e: any) => e.url)).toEqual([
        'http://127.0.0.1:1/real-crm',
      ]);
    });
  });

  describe('PATCH /api/mcp/listings/:id', () => {
    it("applies the owner's changes and refuses everyone else", async () => {
      const id = (await post(listing({ provider: 'patched', url: 'http://127.0.0.1:1/patched' }), vendorKey)).body.id;
      const res = await call(
        'PATCH',
        `/api/mcp/listings/${id}`,
        { summary: 'Patched summary.', audience: 'travel agents' },
        vendorKey,
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id, summary: 'Patched summary.', audience: 'travel agents', updated: true });
      expect((await call('GET', `/api/mcp/endpoints/${id}`)).body.summary).toBe('Patched summary.');

      expect((await call('PATCH', `/api/mcp/listings/${id}`, { summary: 'x' })).status).toBe(401);
      const other = await call('PATCH', `/api/mcp/listings/${id}`, { summary: 'Hijacked.' }, otherKey);
      expect(other.status).toBe(403);
      expect(other.body.message).toMatch(/another account/);
      const url = await call('PATCH', `/api/mcp/listings/${id}`, { url: 'http://127.0.0.1:1/elsewhere' }, vendorKey);
      expect(url.status).toBe(400);
      expect(url.body.message).toMatch(/cannot be changed/);
      expect(
        (await call('PATCH', `/api/mcp/listings/${id}`, { summary: 'Bearer abcdefghijklmnop1234567890' }, vendorKey))
          .status,
      ).toBe(400);
      expect((await call('PATCH', '/api/mcp/listings/mcp_doesnotexist000', { summary: 'x' }, vendorKey)).status).toBe(
        404,
      );
      expect((await call('GET', `/api/mcp/endpoints/${id}`)).body.summary).toBe('Patched summary.');
    });

    it('refuses to change an anonymous listing with 403 saying how to take it over', async () => {
      const id = (await post(listing({ provider: 'anon-patch', url: 'http://127.0.0.1:1/anon-patch' }))).body.id;
      const res = await call('PATCH', `/api/mcp/listings/${id}`, { summary: 'x' }, vendorKey);
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/anonymous.*POST \/api\/mcp\/listings/s);
    });
  });

  describe('DELETE /api/mcp/listings/:id', () => {
    it('removes the listing and its tools from the catalog, the search and the gateway; others get 403', async () => {
      const fresh = await startFixtureProvider([
        [{ name: 'gone_soon', description: 'Will be removed.', inputSchema: { type: 'object' } }],
      ]);
      try {
        const id = (await post(listing({ provider: 'removable', url: fresh.url }), vendorKey)).body.id;
        await waitProbed(id);
        const gateway = createConnectorCatalog({ prisma: plaza.db.prisma, clock: systemClock, cacheMs: 0 });
        expect((await gateway.onlineTools()).map((t) => `${t.provider}__${t.name}`)).toContain('removable__gone_soon');

        expect((await call('DELETE', `/api/mcp/listings/${id}`)).status).toBe(401);
        const other = await call('DELETE', `/api/mcp/listings/${id}`, undefined, otherKey);
        expect(other.status).toBe(403);

        const res = await call('DELETE', `/api/mcp/listings/${id}`, undefined, vendorKey);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id, removed: true });
        expect((await call('GET', `/api/mcp/endpoints/${id}`)).status).toBe(404);
        expect((await call('GET', '/api/mcp/tools?q=gone_soon')).body.tools).toEqual([]);
        const catalog = (await call('GET', '/api/mcp/catalog?limit=200')).body;
        expect(catalog.endpoints.map((e: any) => e.id)).not.toContain(id);
        expect((await gateway.onlineTools()).map((t) => t.provider)).not.toContain('removable');
        expect((await call('DELETE', `/api/mcp/listings/${id}`, undefined, vendorKey)).status).toBe(404);
        // The slug stays bound to the URL: no other server gets it, from anyone.
        for (const key of [undefined, otherKey, vendorKey]) {
          const elsewhere = await post(listing({ provider: 'removable', url: 'http://127.0.0.1:1/elsewhere' }), key);
          expect(elsewhere.status).toBe(409);
          expect(elsewhere.body.message).toMatch(
            /provider slug "removable" was used by a removed listing; slugs are never rebound to another server/,
          );
        }
        // The same server may be listed under its slug again, by anyone: a credential sent under the
        // slug reaches whom it always did. (Bound to an account, a bystander that superseded an
        // anonymous listing and removed it would lock the slug away from the server's owner.)
        const again = await post(listing({ provider: 'removable', url: fresh.url }), otherKey);
        expect(again.status).toBe(201);
        expect((await call('DELETE', `/api/mcp/listings/${again.body.id}`, undefined, otherKey)).status).toBe(200);
        const anonymous = await post(listing({ provider: 'removable', url: fresh.url }));
        expect(anonymous.status).toBe(201);
        expect((await post(listing({ provider: 'removable', url: fresh.url }), vendorKey)).body.supersedes).toBe(
          anonymous.body.id,
        );
      } finally {
        await fresh.close();
      }
    });
  });
});
