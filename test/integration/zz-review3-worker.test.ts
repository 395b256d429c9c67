import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { systemClock } from '../../src/kernel/index.ts';
import { createMailer } from '../../src/mail/index.ts';
import { createSourcesWorker } from '../../src/sources/index.ts';
import { createTestTls, rawArchive, startTestMarket, tempDir, type TestMarket } from '../support/agpk.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { buildPackage, trustCa } from '../support/sources.ts';

let market: TestMarket; let untrust: () => void; let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => { const tls = await createTestTls(); untrust = trustCa(tls.caCert); market = await startTestMarket(tls); tmp = await tempDir('review3-'); });
afterAll(async () => { await market?.close(); await tmp?.dispose(); untrust?.(); });

describe.each(BACKENDS)('review3 worker on %s', (backend) => {
  let plaza: TestPlaza; let n = 0;
  const clock = { t: Date.now(), now() { return this.t; } };
  let worker: ReturnType<typeof createSourcesWorker>;
  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0', PLAZA_RATE_LIMIT_SOURCES_PER_MIN: '1000' } });
    const mailer = createMailer({ prisma: plaza.db.prisma, clock: systemClock, log: plaza.log, smtpUrl: undefined, from: 'x <x@x>' } as any);
    worker = createSourcesWorker({ prisma: plaza.db.prisma, clock, log: plaza.log, config: plaza.config, mailer });
  });
  afterAll(async () => { await worker?.close(); await plaza?.close(); });

  async function serve(file: string, id: string, version: string) {
    const path = `/${backend}/${++n}.agpk`; market.files.set(path, file);
    const sha = createHash('sha256').update(await readFile(file)).digest('hex');
    const res = await fetch(`${plaza.url}/api/agpk/sources`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ package_id: id, name: 'X', version, summary: '', vendor_name: 'V', download_uri: `${market.url}${path}`, sha256: sha }) });
    const j = (await res.json()) as any; expect(res.status, JSON.stringify(j)).toBe(202); return j.source.id as string;
  }
  async function pkgWithCommands(id: string, mutate: (c: any) => void, extra: Record<string,string> = {}) {
    // build once to read the scaffolded agent-commands.json, then rebuild with changes
    const cmds = { agpk_commands_version: '1.0', commands: [{ id: `${id.toLowerCase()}.echo`, summary: 'ok', driver: { kind: 'node', entry: 'payload/echo.mjs' }, input_schema: { type: 'object' } }] };
    mutate(cmds);
    const built = await buildPackage(tmp.path, { id, version: '1.0.0', files: { 'agent-commands.json': JSON.stringify(cmds), ...extra } });
    return built.path;
  }
  const row = (id: string) => plaza.db.prisma.packageSource.findUnique({ where: { id } });

  for (const [name, make] of [
    ['NUL in command summary', (id: string) => pkgWithCommands(id, (c) => { c.commands[0].summary = 'a\u0000b'; })],
    ['emoji cut at 500 chars', (id: string) => pkgWithCommands(id, (c) => { c.commands[0].summary = 'a'.repeat(499) + '\u{1F600}tail'; })],
    ['NUL in a flagged INSTALL line', (id: string) => pkgWithCommands(id, () => {}, { INSTALL: '#!/bin/sh\nsudo true \u0000 x\n' })],
    ['NUL in agpk.json (gate fails)', async (id: string) => { const f = `${tmp.path}/${id}.agpk`; await writeFile(f, rawArchive([{ path: 'agpk.json', type: '0', mode: 0o644, content: '{"a":\u0000}' }])); return f; }],
  ] as const) {
    it(name, async () => {
      const id = `com.r3.${name.replace(/[^a-z0-9]/gi, '').toLowerCase()}`;
      const sid = await serve(await make(id), id, '1.0.0');
      let err: unknown;
      const r = await worker.checkNow(sid).catch((e) => { err = e; return undefined; });
      const after = await row(sid);
      console.log(`[${backend}] ${name}: result=${JSON.stringify(r)} err=${String((err as Error)?.message ?? '').slice(0, 200).replace(/\n/g, ' ')} status=${after?.status} stage=${after?.stage} lease=${after?.leaseOwner} next=${after?.nextCheckAt?.toISOString()}`);
      // second attempt after lease expiry
      clock.t += 10 * 60_000;
      const r2 = await worker.runDue(10).catch((e) => 'THROWN ' + String(e.message).slice(0, 80));
      const after2 = await row(sid);
      console.log(`[${backend}] ${name} again: ${JSON.stringify(r2).slice(0, 200)} status=${after2?.status}`);
    });
  }

  it('a stuck source blocks a good one in runDue', async () => {
    const bad1 = await serve(await pkgWithCommands('com.r3.bad1', (c) => { c.commands[0].summary = '\u0000'; }), 'com.r3.bad1', '1.0.0');
    const bad2 = await serve(await pkgWithCommands('com.r3.bad2', (c) => { c.commands[0].summary = '\u0000'; }), 'com.r3.bad2', '1.0.0');
    const good = await serve((await buildPackage(tmp.path, { id: 'com.r3.good', version: '1.0.0' })).path, 'com.r3.good', '1.0.0');
    for (let i = 0; i < 3; i++) {
      clock.t += 10 * 60_000;
      const r = await worker.runDue(10).catch((e) => 'THROWN ' + String(e.message).slice(0, 60));
      await new Promise((res) => setTimeout(res, 1500));
      console.log(`[${backend}] round ${i}: ${JSON.stringify(r).slice(0, 150)} good=${(await row(good))?.status} bad1=${(await row(bad1))?.status} bad2=${(await row(bad2))?.status}`);
    }
  });
});
