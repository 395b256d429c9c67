/**
 * Ctrl-C during `plaza agpk install` (the real command, a child process): SIGINT (or SIGTERM)
 * while the archive downloads, or while the INSTALL hook runs, leaves AGPK_HOME as it was — no
 * partial download in tmp/, no unregistered packages/<id>/<version>, no registry.lock, no hook
 * still running — and the command exits 130 (143) saying it was interrupted. The next operation
 * also clears what a killed one (SIGKILL: no cleanup possible) left behind.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { packPackage, scaffoldPackage } from '../../src/agpk/index.ts';
import { createTestTls, startTestMarket, tempDir, type TestMarket } from '../support/agpk.ts';
import { startChild } from '../support/children.ts';
import { childEnv, plazaArgs, runPlaza } from '../support/cli.ts';

let market: TestMarket;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let env: Record<string, string>;
let home: string;
let run = 0;

beforeAll(async () => {
  const tls = await createTestTls();
  market = await startTestMarket(tls);
  tmp = await tempDir();
  await writeFile(join(tmp.path, 'ca.pem'), tls.caCert);
});
beforeEach(() => {
  home = join(tmp.path, `home-${++run}`);
  env = { AGPK_HOME: home, PLAZA_SHARE_URL: market.url, NODE_EXTRA_CA_CERTS: join(tmp.path, 'ca.pem') };
});
afterAll(async () => {
  await market?.close();
  await tmp?.dispose();
});

/** `plaza agpk …` left running, with its output collected. */
function start(args: string[]): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
} {
  const child = startChild(process.execPath, plazaArgs('agpk', ...args), {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, output: () => output, exited };
}

/** A file's text, '' while it does not exist. */
const text = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').trim() : '');
const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
/** Running (a killed process nobody has reaped yet is a zombie, state Z: not running). */
const alive = (pid: number) => !/^\d+ \(.*\) Z/.test(text(`/proc/${pid}/stat`)) && text(`/proc/${pid}/stat`) !== '';

/** An archive whose INSTALL writes its sleeper's pid to `marker` and then takes 30 s (none: a quick one). */
async function archiveOf(id: string, marker?: string): Promise<string> {
  const dir = join(tmp.path, 'src', id);
  await scaffoldPackage(dir, { id, name: id, version: '1.0.0' });
  if (marker)
    await writeFile(
      join(dir, 'INSTALL'),
      `#!/bin/sh\nmkdir -p "$AGPK_INSTALL_ROOT/var"\nsleep 30 &\necho $! > ${marker}\nwait\n`,
    );
  return (await packPackage(dir)).archive;
}

describe('plaza agpk install, interrupted', () => {
  it.each([['SIGINT', 130] as const, ['SIGTERM', 143] as const])(
    'removes the partial download on %s',
    async (signal, code) => {
      market.sources = [
        {
          package_id: 'acme.slow',
          name: 'Slow',
          version: '1.0.0',
          summary: 's',
          download_uri: `${market.url}/drip/slow.agpk`,
          sha256: 'a'.repeat(64),
          status: 'healthy',
        },
      ];
      const cli = start(['install', 'acme.slow', '--approve', '-y']);
      await expect.poll(() => list(join(home, 'tmp')).some((f) => f.endsWith('.agpk')), { timeout: 20_000 }).toBe(true);
      cli.child.kill(signal);
      const [exit] = await cli.exited;
      expect(exit).toBe(code);
      expect(cli.output()).toContain(`interrupted (${signal})`);
      expect(list(join(home, 'tmp'))).toEqual([]);
      expect(existsSync(join(home, 'registry.lock'))).toBe(false);
    },
  );

  it('stops the INSTALL hook and removes the unregistered install folder on SIGINT', async () => {
    const marker = join(tmp.path, `hook-${run}.pid`);
    const archive = await archiveOf('acme.hook', marker);
    const cli = start(['install', archive, '--approve', '-y']);
    await expect.poll(() => text(marker) !== '', { timeout: 20_000 }).toBe(true);
    const sleeper = Number(text(marker));
    cli.child.kill('SIGINT');
    const [exit] = await cli.exited;
    expect(exit).toBe(130);
    expect(cli.output()).toContain('interrupted (SIGINT)');
    expect(list(join(home, 'packages'))).toEqual([]);
    expect(list(join(home, 'tmp'))).toEqual([]);
    expect(existsSync(join(home, 'registry.lock'))).toBe(false);
    await expect.poll(() => alive(sleeper)).toBe(false);
    const listed = await runPlaza(['agpk', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout).packages).toEqual([]);
  });

  it('clears what a killed install left (tmp files, an unregistered folder, its lock) at the next operation', async () => {
    const marker = join(tmp.path, `hook-${run}.pid`);
    const archive = await archiveOf('acme.killed', marker);
    const cli = start(['install', archive, '--approve', '-y']);
    await expect.poll(() => text(marker) !== '', { timeout: 20_000 }).toBe(true);
    process.kill(Number(text(marker)), 'SIGKILL');
    cli.child.kill('SIGKILL');
    await cli.exited;
    await mkdir(join(home, 'tmp'), { recursive: true });
    await writeFile(join(home, 'tmp', '123-abc.agpk'), 'half a download');
    expect(existsSync(join(home, 'registry.lock'))).toBe(true);
    expect(list(join(home, 'packages', 'acme.killed'))).toEqual(['1.0.0']);

    const next = await runPlaza(['agpk', 'install', await archiveOf('acme.other'), '--approve', '-y'], env);
    expect(next.code, next.stderr).toBe(0);
    expect(list(join(home, 'tmp'))).toEqual([]);
    expect(list(join(home, 'packages'))).toEqual(['acme.other']);
    expect(existsSync(join(home, 'registry.lock'))).toBe(false);
  });
});
