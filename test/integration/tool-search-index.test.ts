import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createToolRepository } from '../../src/marketplace/index.ts';
import { createToolSearchIndex } from '../../src/marketplace/search-index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';

/**
 * The in-memory tool search against the database it mirrors: the same ranking and pages as the
 * SQL search, and catching up with changes made by another instance (another index on the same
 * database stands in for it).
 */
describe.each(BACKENDS)('tool search index on %s', (backend) => {
  let t: TestDatabase;

  async function endpoint(id: string, provider: string, status: string): Promise<void> {
    await t.db.sql.query(
      `INSERT INTO "mcp_endpoints" ("id", "provider", "url", "registered_by", "status", "updated_at") VALUES ($1, $2, $3, 'a@example.com', $4, now())`,
      [id, provider, `https://${provider}.example.com/mcp`, status],
    );
  }
  async function tool(endpointId: string, provider: string, name: string, description: string): Promise<void> {
    await t.db.sql.query(
      `INSERT INTO "mcp_tools" ("id", "endpoint_id", "provider", "name", "description") VALUES ($1, $2, $3, $4, $5)`,
      [`tool_${endpointId}_${name}`, endpointId, provider, name, description],
    );
  }
  const touch = (id: string, status: string) =>
    t.db.sql.query(`UPDATE "mcp_endpoints" SET "status" = $2, "updated_at" = now() WHERE "id" = $1`, [id, status]);

  beforeAll(async () => {
    t = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await t.dispose();
  });
  beforeEach(async () => {
    await t.db.sql.exec('DELETE FROM "mcp_tools"; DELETE FROM "mcp_endpoints";');
    await endpoint('mcp_a', 'alpha', 'healthy');
    await endpoint('mcp_b', 'weather-co', 'degraded');
    await endpoint('mcp_c', 'gamma', 'unreachable');
    await tool('mcp_a', 'alpha', 'get_weather', 'Current conditions for a city.');
    await tool('mcp_a', 'alpha', 'forecast', 'Weather forecast for the week.');
    await tool('mcp_b', 'weather-co', 'radar', 'Rain radar images.');
    await tool('mcp_b', 'weather-co', 'weather_alerts', 'Storm warnings.');
    await tool('mcp_c', 'gamma', 'weather_history', 'Offline endpoint, never listed.');
    for (let i = 0; i < 30; i++)
      await tool('mcp_a', 'alpha', `send_note_${String(i).padStart(2, '0')}`, 'Sends a note.');
  });

  const names = (page: { items: { provider: string; name: string }[] }) =>
    page.items.map((i) => `${i.provider}/${i.name}`);

  it('ranks like the SQL search: name matches first, then provider matches, then the rest', async () => {
    const index = createToolSearchIndex(t.db);
    await index.refresh();
    const indexed = createToolRepository(t.db, index);
    const sql = createToolRepository(t.db);
    const page = await indexed.search({ q: 'weather', limit: 10 });
    expect(names(page)).toEqual([
      'alpha/get_weather',
      'weather-co/weather_alerts',
      'weather-co/radar',
      'alpha/forecast',
    ]);
    expect(names(await sql.search({ q: 'weather', limit: 10 }))).toEqual(names(page));
    // Every word must match somewhere; prefixes only when whole words find nothing.
    expect(names(await indexed.search({ q: 'storm weather', limit: 10 }))).toEqual(['weather-co/weather_alerts']);
    expect(names(await indexed.search({ q: 'forec', limit: 10 }))).toEqual(['alpha/forecast']);
    expect(names(await indexed.search({ q: 'weather', provider: 'alpha', limit: 10 }))).toEqual([
      'alpha/get_weather',
      'alpha/forecast',
    ]);
    expect((await indexed.search({ q: 'nothing here', limit: 10 })).items).toEqual([]);
  });

  it('ranks a tool whose name is exactly the search first, whatever its provider, in both searches', async () => {
    await endpoint('mcp_z', 'zeta', 'healthy');
    await tool('mcp_z', 'zeta', 'Weather', 'Plain weather.');
    await tool('mcp_z', 'zeta', 'get-weather', 'Another one.');
    const index = createToolSearchIndex(t.db);
    await index.refresh();
    const indexed = createToolRepository(t.db, index);
    const sql = createToolRepository(t.db);
    const expected = [
      'zeta/Weather',
      'alpha/get_weather',
      'weather-co/weather_alerts',
      'zeta/get-weather',
      'weather-co/radar',
      'alpha/forecast',
    ];
    expect(names(await indexed.search({ q: 'weather', limit: 10 }))).toEqual(expected);
    expect(names(await sql.search({ q: 'weather', limit: 10 }))).toEqual(expected);
    // Separators do not matter, and the cursors agree.
    expect(names(await indexed.search({ q: 'GET weather', limit: 10 }))).toEqual([
      'alpha/get_weather',
      'zeta/get-weather',
    ]);
    const first = await indexed.search({ q: 'weather', limit: 2 });
    expect(names(first)).toEqual(expected.slice(0, 2));
    expect(names(await sql.search({ q: 'weather', limit: 2, cursor: first.nextCursor! }))).toEqual(
      expected.slice(2, 4),
    );
    expect(names(await indexed.search({ q: 'weather', limit: 2, cursor: first.nextCursor! }))).toEqual(
      expected.slice(2, 4),
    );
    // A tool that goes offline leaves the exact tier.
    await touch('mcp_z', 'unreachable');
    index.markStale();
    expect(names(await indexed.search({ q: 'weather', limit: 10 }))[0]).toBe('alpha/get_weather');
  });

  it('pages through both tiers with cursors the SQL search also understands', async () => {
    const index = createToolSearchIndex(t.db);
    await index.refresh();
    const indexed = createToolRepository(t.db, index);
    const sql = createToolRepository(t.db);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await indexed.search({ q: 'note', limit: 7, ...(cursor ? { cursor } : {}) });
      seen.push(...names(page));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
    expect(seen).toEqual([...seen].sort());
    const first = await indexed.search({ q: 'note', limit: 7 });
    expect(names(await sql.search({ q: 'note', limit: 7, cursor: first.nextCursor! }))).toEqual(
      names(await indexed.search({ q: 'note', limit: 7, cursor: first.nextCursor! })),
    );
  });

  it('catches up with changes made by another instance, including deletions', async () => {
    const index = createToolSearchIndex(t.db, { maxAgeMs: 0 });
    const repo = createToolRepository(t.db, index);
    await index.refresh();
    expect(names(await repo.search({ q: 'history', limit: 10 }))).toEqual([]);
    await touch('mcp_c', 'healthy');
    expect(names(await repo.search({ q: 'history', limit: 10 }))).toEqual(['gamma/weather_history']);
    await touch('mcp_b', 'unreachable');
    expect(names(await repo.search({ q: 'radar', limit: 10 }))).toEqual([]);
    // A probe that moves updated_at without changing tools, then one that renames a tool.
    await touch('mcp_c', 'healthy');
    expect(names(await repo.search({ q: 'history', limit: 10 }))).toEqual(['gamma/weather_history']);
    await t.db.sql.query(`UPDATE "mcp_tools" SET "name" = 'weather_archive' WHERE "endpoint_id" = 'mcp_c'`);
    await touch('mcp_c', 'degraded');
    expect(names(await repo.search({ q: 'history', limit: 10 }))).toEqual([]);
    expect(names(await repo.search({ q: 'archive', limit: 10 }))).toEqual(['gamma/weather_archive']);
    await t.db.sql.query(`DELETE FROM "mcp_endpoints" WHERE "id" = 'mcp_a'`);
    expect(names(await repo.search({ q: 'weather', limit: 10 }))).toEqual(['gamma/weather_archive']);
    expect(index.size).toBe(1);
  });

  it('leaves the first searches to SQL while it loads', async () => {
    const index = createToolSearchIndex(t.db);
    expect(await index.search(['weather'], { prefix: false, need: 5 })).toBeUndefined();
    await index.refresh();
    expect(await index.search(['weather'], { prefix: false, need: 5 })).toEqual({
      tierA: ['tool_mcp_a_get_weather', 'tool_mcp_b_weather_alerts'],
      tierB: ['tool_mcp_b_radar', 'tool_mcp_a_forecast'],
    });
  });

  it('answers from its last view within maxAgeMs, and at once after markStale', async () => {
    const index = createToolSearchIndex(t.db, { maxAgeMs: 60_000 });
    const repo = createToolRepository(t.db, index);
    await index.refresh();
    expect(names(await repo.search({ q: 'history', limit: 10 }))).toEqual([]);
    await touch('mcp_c', 'healthy');
    // Not yet seen: the index looked less than a minute ago and nothing here said otherwise.
    expect(names(await repo.search({ q: 'history', limit: 10 }))).toEqual([]);
    index.markStale();
    expect(names(await repo.search({ q: 'history', limit: 10 }))).toEqual(['gamma/weather_history']);
  });
});
