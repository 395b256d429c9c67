/**
 * The AGPK publishing flow end to end (spec §4.4) through the real `plaza agpk` command: scaffold,
 * edit commands and payload, pack, validate, serve the archive from a local HTTPS market (test CA,
 * trusted through NODE_EXTRA_CA_CERTS), install from the market, list-commands, invoke, verify,
 * tamper, verify again, invoke refused, remove. In-process tests cover the market's other paths: wrong sha256,
 * depends pulled from the market, and list-options ranking. An archive no file system can unpack
 * (a 300-byte name) fails install cleanly: exit 1, one clear line, no registry.lock, nothing in tmp/.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  type AgpkContext,
  createRegistry,
  downloadArchive,
  fetchMarketSources,
  installPackages,
  loadAgpkSchemas,
  packPackage,
  rankSources,
  scaffoldPackage,
  upgradePackage,
} from '../../src/agpk/index.ts';
import {
  createTestTls,
  rawArchive,
  type RawEntry,
  startTestMarket,
  tempDir,
  type TestMarket,
  type TestTls,
} from '../support/agpk.ts';
import { runPlaza } from '../support/cli.ts';

let tls: TestTls;
let market: TestMarket;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  tls = await createTestTls();
  market = await startTestMarket(tls);
  tmp = await tempDir();
  await writeFile(join(tmp.path, 'ca.pem'), tls.caCert);
  env = {
    AGPK_HOME: join(tmp.path, 'home'),
    PLAZA_SHARE_URL: market.url,
    NODE_EXTRA_CA_CERTS: join(tmp.path, 'ca.pem'),
  };
});
afterAll(async () => {
  await market?.close();
  await tmp?.dispose();
});

const file = (path: string, content: string): RawEntry => ({ path, type: '0', mode: 0o644, content });

async function plaza(...args: string[]): Promise<{ code: number | null; json: any; stderr: string }> {
  const r = await runPlaza(['agpk', ...args], env);
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = r.stdout;
  }
  return { code: r.code, json, stderr: r.stderr };
}

describe('plaza agpk: the publishing flow', () => {
  it('goes from scaffold to a market install, runs the command, detects tampering, and removes', async () => {
    const pkg = join(tmp.path, 'weather');
    expect(
      (await plaza('scaffold', pkg, '--id', 'acme.weather', '--name', 'Weather', '--version', '2.0.0', '--json')).code,
    ).toBe(0);

    // edit agent-commands.json and payload/
    await writeFile(
      join(pkg, 'payload', 'forecast.mjs'),
      'let s="";for await (const c of process.stdin) s+=c;const {city}=JSON.parse(s);console.log(JSON.stringify({city, forecast:"sunny"}))\n',
    );
    const commands = {
      commands: [
        {
          id: 'acme.weather.forecast',
          summary: 'Forecast for a city',
          driver: { kind: 'node', entry: 'payload/forecast.mjs' },
          input_schema: {
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
            additionalProperties: false,
          },
        },
      ],
    };
    await writeFile(join(pkg, 'agent-commands.json'), JSON.stringify(commands, null, 2));

    const packed = await plaza('pack', pkg, '-o', join(tmp.path, 'weather.agpk'), '--json');
    expect(packed.code).toBe(0);
    expect(packed.json.sha256).toMatch(/^[0-9a-f]{64}$/);
    const validated = await plaza('validate', packed.json.archive, '--json');
    expect(validated.code).toBe(0);
    expect(validated.json).toMatchObject({
      ok: true,
      package_id: 'acme.weather',
      version: '2.0.0',
      sha256: packed.json.sha256,
    });

    // upload to an HTTPS origin and register download_uri + sha256
    market.files.set('/dl/weather.agpk', packed.json.archive);
    market.sources = [
      {
        package_id: 'acme.weather',
        name: 'Weather',
        version: '2.0.0',
        summary: 'Forecasts for agents',
        vendor: 'Acme',
        download_uri: `${market.url}/dl/weather.agpk`,
        sha256: packed.json.sha256,
        status: 'healthy',
      },
    ];

    const refused = await plaza('install', 'acme.weather', '--approve');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'refused: acme.weather is not signed by a trusted key; a package without a trusted signature needs an explicit -y',
    );
    // Without a terminal too, the summary of what was asked for comes first.
    expect(refused.stderr).toMatch(
      /install:\n {2}acme\.weather 2\.0\.0 .*\n {4}source https:.*\n {4}sha256 [0-9a-f]{64}\n {4}signature NONE \(unsigned\)/,
    );

    const installed = await plaza('install', 'acme.weather', '--approve', '-y', '--json');
    expect(installed.code).toBe(0);
    expect(installed.json).toMatchObject({
      ok: true,
      action: 'install',
      packages: [{ package_id: 'acme.weather', version: '2.0.0' }],
    });
    expect(market.requests).toContain('/dl/weather.agpk');

    const listed = await plaza('list-commands', '--package-id', 'acme.weather', '--json');
    expect(listed.json.commands.map((c: { id: string }) => c.id)).toEqual(['acme.weather.forecast']);

    const invoked = await plaza('invoke', 'acme.weather.forecast', '--args', '{"city":"Oslo"}');
    expect(invoked.code).toBe(0);
    expect(invoked.json).toMatchObject({ ok: true, output: { city: 'Oslo', forecast: 'sunny' } });
    const badArgs = await plaza('invoke', 'acme.weather.forecast', '--args', '{"town":"Oslo"}', '--json');
    expect(badArgs.code).toBe(1);
    expect(badArgs.json.error.message).toContain('missing required property "city"');

    expect((await plaza('verify', 'acme.weather', '--json')).json).toMatchObject({
      ok: true,
      packages: [{ changed: [], missing: [] }],
    });
    const file = join(env.AGPK_HOME!, 'packages', 'acme.weather', '2.0.0', 'payload', 'forecast.mjs');
    await writeFile(file, `${await readFile(file, 'utf8')}// tampered\n`);
    const tampered = await plaza('verify', '--json');
    expect(tampered.code).toBe(1);
    expect(tampered.json).toMatchObject({
      ok: false,
      packages: [{ package_id: 'acme.weather', changed: ['payload/forecast.mjs'], missing: [] }],
    });
    const refusedRun = await runPlaza(['agpk', 'invoke', 'acme.weather.forecast', '--args', '{"city":"Oslo"}'], env);
    expect(refusedRun.code).toBe(1);
    expect(refusedRun.stderr).toContain(
      'plaza agpk: refused: acme.weather 2.0.0 was changed after install (changed payload/forecast.mjs)',
    );
    expect(refusedRun.stdout).toBe('');

    expect((await plaza('remove', 'acme.weather')).code).toBe(1);
    const removed = await plaza('remove', 'acme.weather', '--approve', '--json');
    expect(removed.code).toBe(0);
    expect((await plaza('list', '--json')).json.packages).toEqual([]);
    // A dozen CLI runs, each a Node start: 60 s was not enough at load 8.
  }, 180_000);

  it('exits 2 on usage errors and 1 on an invalid package, with the problem listed', async () => {
    expect((await plaza('invoke', 'x', '--args', '{nope')).code).toBe(2);
    expect((await plaza('scaffold')).code).toBe(2);
    const broken = join(tmp.path, 'broken');
    await scaffoldPackage(broken, { id: 'acme.broken', name: 'B', version: '1' });
    await writeFile(join(broken, 'agent-commands.json'), '{"commands": []}');
    const r = await plaza('validate', broken);
    expect(r.code).toBe(1);
    expect(r.json).toContain('error   agent-commands.json $.commands: must NOT have fewer than 1 items');
    // A folder edited after scaffold/pack: its DIGESTS no longer match, and validate says how to refresh them.
    expect(r.json).toContain(
      `  hint    files changed since DIGESTS was written: \`plaza agpk pack ${broken}\` writes it anew`,
    );
  });

  it('says what is wrong and what to do when install names no file, no listed package, or an unreachable market or origin', async () => {
    // A mistyped archive path was looked up in the market: "package "./dist/x.agpk" is not in the market's healthy list".
    const before = market.requests.length;
    const missing = await plaza('install', './dist/acme.weather-9.9.9.agpk', '--approve', '-y');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      './dist/acme.weather-9.9.9.agpk does not exist; install takes an .agpk archive file or a market package_id',
    );
    expect(market.requests.length).toBe(before);
    await scaffoldPackage(join(tmp.path, 'unpacked'), { id: 'acme.unpacked', name: 'U', version: '1.0.0' });
    const folder = await plaza('install', join(tmp.path, 'unpacked'), '--approve', '-y');
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain(
      `${join(tmp.path, 'unpacked')} is a folder, not an archive: pack it first (\`plaza agpk pack <folder>\`)`,
    );

    market.sources = [];
    const bare = await plaza('install', 'acme.weather-9.9.9.agpk', '--approve', '-y');
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('there is no file acme.weather-9.9.9.agpk in ');
    const unknown = await plaza('install', 'acme.nothing', '--approve', '-y');
    expect(unknown.stderr).toContain(
      `package "acme.nothing" is not in the market's healthy list (${market.url}/share/v1/agpk/sources); \`plaza agpk list-options --query <words>\` searches it`,
    );

    const down = await runPlaza(['agpk', 'install', 'acme.weather', '--approve', '-y'], {
      ...env,
      PLAZA_SHARE_URL: 'https://127.0.0.1:9',
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /GET https:\/\/127\.0\.0\.1:9\/share\/v1\/agpk\/sources failed: .*ECONNREFUSED.* \(is a Plaza running at https:\/\/127\.0\.0\.1:9\? Start it, or point PLAZA_SHARE_URL at the market's base URL\)/,
    );
    market.sources = [
      {
        package_id: 'acme.gone',
        name: 'Gone',
        version: '1.0.0',
        summary: '',
        download_uri: 'https://127.0.0.1:9/gone.agpk',
        sha256: 'a'.repeat(64),
      },
    ];
    const gone = await plaza('install', 'acme.gone', '--approve', '-y');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(
      "(the package's download origin did not serve it; try again later, or install from an archive file)",
    );
    for (const r of [missing, folder, bare, unknown, down, gone]) expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(env.AGPK_HOME!, 'packages', 'acme.gone'))).toBe(false);
  });
});

describe('agpk and the market (in process)', () => {
  let ctx: AgpkContext;
  beforeAll(() => {
    ctx = {
      registry: createRegistry(join(tmp.path, 'home2')),
      schemas: loadAgpkSchemas(),
      shareUrl: market.url,
      hostVersion: '0.1.0',
      ca: tls.caCert,
      baseEnv: { PATH: process.env.PATH },
    };
  });

  async function publish(
    id: string,
    extra: Record<string, unknown> = {},
    version = '1.0.0',
  ): Promise<{ sha256: string; uri: string }> {
    const dir = join(tmp.path, 'm', `${id}-${version}`);
    await scaffoldPackage(dir, { id, name: id, version });
    const manifest = JSON.parse(await readFile(join(dir, 'agpk.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(dir, 'agpk.json'), JSON.stringify({ ...manifest, ...extra }));
    const r = await packPackage(dir);
    market.files.set(`/m/${id}-${version}.agpk`, r.archive);
    return { sha256: r.sha256, uri: `${market.url}/m/${id}-${version}.agpk` };
  }

  it('refuses a download whose sha256 differs from the market entry', async () => {
    const { uri } = await publish('acme.drift');
    const wrong = 'a'.repeat(64);
    market.sources = [
      { package_id: 'acme.drift', name: 'Drift', version: '1.0.0', summary: '', download_uri: uri, sha256: wrong },
    ];
    await expect(installPackages(ctx, ['acme.drift'], { approve: true, yes: true })).rejects.toThrow(
      new RegExp(`^sha256 mismatch for ${uri}: the market lists ${wrong}, the download has [0-9a-f]{64}$`),
    );
    expect((await ctx.registry.read()).packages).toEqual({});
  });

  it('pulls missing depends from the market and installs them first', async () => {
    const lib = await publish('acme.lib');
    const app = await publish('acme.app', { depends: ['acme.lib'] });
    market.sources = [
      {
        package_id: 'acme.app',
        name: 'App',
        version: '1.0.0',
        summary: 'the app',
        download_uri: app.uri,
        sha256: app.sha256,
      },
      {
        package_id: 'acme.lib',
        name: 'Lib',
        version: '1.0.0',
        summary: 'a library',
        download_uri: lib.uri,
        sha256: lib.sha256,
      },
    ];
    const r = await installPackages(ctx, ['acme.app'], { approve: true, yes: true });
    expect(r.packages.map((p) => p.package_id)).toEqual(['acme.lib', 'acme.app']);
  });

  it('upgrades from the market to the highest listed version', async () => {
    const v1 = await publish('acme.up');
    market.sources = [
      { package_id: 'acme.up', name: 'Up', version: '1.0.0', summary: '', download_uri: v1.uri, sha256: v1.sha256 },
    ];
    await installPackages(ctx, ['acme.up'], { approve: true, yes: true });
    expect((await upgradePackage(ctx, 'acme.up', { approve: true, yes: true })).changed).toBe(false);
    const v2 = await publish('acme.up', {}, '1.10.0');
    market.sources.push({
      package_id: 'acme.up',
      name: 'Up',
      version: '1.10.0',
      summary: '',
      download_uri: v2.uri,
      sha256: v2.sha256,
    });
    const r = await upgradePackage(ctx, 'acme.up', { approve: true, yes: true });
    expect(r.message).toBe('upgraded acme.up 1.0.0 -> 1.10.0');
    expect((await ctx.registry.read()).packages['acme.up']!.source).toEqual({
      kind: 'market',
      uri: v2.uri,
      sha256: v2.sha256,
    });
  });

  it('ranks list-options matches and skips entries that are not https', async () => {
    market.sources = [
      {
        package_id: 'acme.plc',
        name: 'PLC bridge',
        version: '1',
        summary: 'Modbus PLC read/write',
        download_uri: `${market.url}/x`,
        sha256: 'b'.repeat(64),
      },
      {
        package_id: 'acme.mail',
        name: 'Mail',
        version: '1',
        summary: 'send mail; not a plc',
        download_uri: `${market.url}/y`,
        sha256: 'c'.repeat(64),
      },
      {
        package_id: 'evil.http',
        name: 'PLC http',
        version: '1',
        summary: 'plc',
        download_uri: 'http://example.invalid/z',
        sha256: 'd'.repeat(64),
      },
    ];
    const sources = await fetchMarketSources(market.url, { ca: tls.caCert });
    expect(sources.map((s) => s.package_id)).toEqual(['acme.plc', 'acme.mail']);
    expect(rankSources(sources, 'plc').map((s) => s.package_id)).toEqual(['acme.plc', 'acme.mail']);
    expect(rankSources(sources, 'nothing-like-this')).toEqual([]);
  });

  it('cuts a market that keeps the connection alive but sends next to nothing, and reads characters split between reads', async () => {
    const dest = join(tmp.path, 'drip.agpk');
    await expect(
      downloadArchive(`${market.url}/drip/x.agpk`, dest, {
        ca: tls.caCert,
        expectedSha256: 'a'.repeat(64),
        stallWindowMs: 600,
      }),
    ).rejects.toThrow(/stalled/);
    expect(existsSync(dest)).toBe(false);
    await expect(fetchMarketSources(`${market.url}/drip`, { ca: tls.caCert, stallWindowMs: 600 })).rejects.toThrow(
      /did not answer within 600 ms/,
    );
    market.sources = [
      {
        package_id: 'acme.euro',
        name: 'Euro € tools',
        version: '1',
        summary: '€',
        download_uri: `${market.url}/x`,
        sha256: 'b'.repeat(64),
      },
    ];
    expect((await fetchMarketSources(`${market.url}/split`, { ca: tls.caCert })).map((s) => s.name)).toEqual([
      'Euro € tools',
    ]);
  });

  it('reads the market of the Plaza `plaza agents login` stored when no market URL is set', async () => {
    market.sources = [
      {
        package_id: 'acme.plc',
        name: 'PLC bridge',
        version: '1',
        summary: 'Modbus PLC read/write',
        download_uri: `${market.url}/x`,
        sha256: 'b'.repeat(64),
      },
    ];
    const credentials = join(tmp.path, 'agent-credentials.json');
    const login = await runPlaza(
      ['agents', 'login', '--token', `agt_${'a'.repeat(13)}_${'b'.repeat(40)}`, '--url', `${market.url}/`],
      { PLAZA_CREDENTIALS_FILE: credentials },
    );
    expect(login.code, login.stderr).toBe(0);
    const { PLAZA_SHARE_URL: _set, ...unset } = env;
    const listed = await runPlaza(['agpk', 'list-options', '--query', 'plc', '--json'], {
      ...unset,
      PLAZA_CREDENTIALS_FILE: credentials,
    });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).options.map((o: { package_id: string }) => o.package_id)).toEqual(['acme.plc']);
    // A configured URL still wins over the stored one.
    const configured = await runPlaza(['agpk', 'list-options', '--query', 'plc', '--json'], {
      ...unset,
      PLAZA_CREDENTIALS_FILE: credentials,
      PLAZA_SHARE_URL: 'https://127.0.0.1:1',
    });
    expect(configured.code).not.toBe(0);
  });
});

// A PAX header lets an entry carry a name no file system holds. The write of it was rejected with
// nobody awaiting it: `plaza agpk install` died of the unhandled rejection, leaving registry.lock
// and its folder in tmp/ behind (issue 31).
describe('plaza agpk install of an archive no file system can unpack', () => {
  const longName = rawArchive([file('agpk.json', '{}'), { ...file('long', 'x'), pax: { path: 'n'.repeat(300) } }]);
  let homes = 0;

  async function install(ref: string, home = join(tmp.path, `home-unsafe-${++homes}`)) {
    const r = await runPlaza(['agpk', 'install', ref, '--approve', '-y'], { ...env, AGPK_HOME: home });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(home, 'registry.lock'))).toBe(false);
    expect(readdirSync(join(home, 'tmp'))).toEqual([]);
    expect(existsSync(join(home, 'registry.json'))).toBe(false);
    return r.stderr;
  }

  it('refuses it from a file and from the market with a clear error, leaving nothing behind', async () => {
    const archive = join(tmp.path, 'long-name.agpk');
    await writeFile(archive, longName);
    market.files.set('/long-name.agpk', archive);
    market.sources = [
      {
        package_id: 'acme.longname',
        name: 'Long',
        version: '1.0.0',
        summary: '',
        download_uri: `${market.url}/long-name.agpk`,
        sha256: createHash('sha256').update(longName).digest('hex'),
      },
    ];
    for (const ref of [archive, 'acme.longname']) {
      expect(await install(ref)).toBe(
        `plaza agpk: unsafe archive: "${'n'.repeat(80)}…" has a name of 300 bytes, over the 255 a file system holds\n  (archive) : "${'n'.repeat(80)}…" has a name of 300 bytes, over the 255 a file system holds\n`,
      );
    }
  });

  it('fails as cleanly when the file system refuses a name only as it is written (AGPK_HOME deep in folders)', async () => {
    let home = join(tmp.path, 'deep');
    while (Buffer.byteLength(home) < 3_300) home = join(home, 'd'.repeat(250));
    await mkdir(home, { recursive: true });
    // The staging folder is tmp/<13-digit time>-<12 hex>: with this name the file's path is 4096 bytes.
    const folder = `${'e'.repeat(250)}/${'f'.repeat(250)}`;
    const name = 'g'.repeat(4_095 - Buffer.byteLength(join(home, 'tmp', 'x'.repeat(26), folder)));
    const archive = join(tmp.path, 'deep-name.agpk');
    await writeFile(
      archive,
      rawArchive([
        file('agpk.json', '{}'),
        { ...file('long', 'x'), pax: { path: `${folder}/${name}` } },
        file('z.txt', 'z'),
      ]),
    );
    expect(await install(archive, home)).toMatch(
      /^plaza agpk: unsafe archive: "e+…" cannot be written on this file system \(ENAMETOOLONG\)\n/,
    );
  });
});
