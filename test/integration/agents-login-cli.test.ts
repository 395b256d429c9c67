/**
 * Pins `plaza agents login`'s credential check against a real Plaza: a URL where Plaza answers
 * but its gateway is not (a 404, e.g. `--url …/mcp`) is refused with the base URL suggested, a
 * non-zero exit, and the stored credential left as it was; only an unreachable or failing (5xx)
 * Plaza gets the token stored unchecked; the gateway's own answers verify or refuse the token.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { saveCredential } from '../../src/cli/credential-store.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { freePort, runPlaza } from '../support/cli.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe('plaza agents login', () => {
  let plaza: TestPlaza;
  let token = '';
  let failing: Server;
  let failingUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'plaza-login-'));
  const unknownToken = `agt_${'a'.repeat(13)}_${'b'.repeat(40)}`;

  beforeAll(async () => {
    plaza = await startTestPlaza('pglite', { env: { PLAZA_BACKGROUND: '0' } });
    const account = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'cli@example.com',
    });
    token = (
      await createAgentService({ prisma: plaza.db.prisma, clock: systemClock }).create(account.account.id, {
        display_name: 'CLI bot',
      })
    ).token;
    // 503, or the status its path begins with (/s429/mcp: 429), as a proxy in front of Plaza answers.
    failing = createServer(
      (req, res) => void res.writeHead(Number(/^\/s(\d{3})\//.exec(req.url ?? '')?.[1] ?? 503)).end('maintenance'),
    );
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    failing?.close();
    await plaza?.close();
  });

  /** A credential file already holding a good credential, as after an earlier login. */
  function storedGood(name: string): { file: string; before: string } {
    const file = join(dir, `${name}.json`);
    saveCredential(file, { url: plaza.url, token });
    return { file, before: readFileSync(file, 'utf8') };
  }

  it.each([
    ['/mcp', true],
    ['/mcp/', true],
    ['/mcp/p/everything', true],
    ['/not-plaza', false],
  ])(
    'refuses --url <plaza>%s, where Plaza answers 404, and keeps the stored credential',
    async (path, suggestsBase) => {
      const { file, before } = storedGood(`wrong-${path.replace(/\W/g, '_')}`);
      const login = await runPlaza(['agents', 'login', '--token', token, '--url', `${plaza.url}${path}`], {
        PLAZA_CREDENTIALS_FILE: file,
      });
      expect(login.code, login.stderr).not.toBe(0);
      expect(login.stderr).toMatch(/answered HTTP 404/);
      expect(login.stderr).not.toMatch(/stored unchecked/);
      expect(login.stderr).toMatch(/nothing stored; the stored credential is unchanged/i);
      if (suggestsBase) expect(login.stderr).toContain(`--url ${plaza.url}`);
      else expect(login.stderr).not.toMatch(/--url /);
      expect(login.stdout).toBe('');
      expect(readFileSync(file, 'utf8')).toBe(before);
    },
  );

  it('stores the token checked against the base URL, and refuses one the gateway refuses', async () => {
    const { file } = storedGood('good');
    const login = await runPlaza(['agents', 'login', '--token', token, '--url', `${plaza.url}/`], {
      PLAZA_CREDENTIALS_FILE: file,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ verified: true });
    const refused = await runPlaza(['agents', 'login', '--token', unknownToken, '--url', plaza.url], {
      PLAZA_CREDENTIALS_FILE: file,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refuses this agent token/);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: plaza.url, token });
  });

  it.each([
    ['not running', async () => `http://127.0.0.1:${await freePort()}`],
    ['answering 503', async () => failingUrl],
    ['behind a proxy answering 429', async () => `${failingUrl}/s429`],
    ['behind a proxy answering 403', async () => `${failingUrl}/s403`],
  ])('stores the token unchecked when Plaza is %s', async (_what, url) => {
    const file = join(dir, `unchecked-${_what.replace(/\W/g, '_')}.json`);
    const base = await url();
    const login = await runPlaza(['agents', 'login', '--token', unknownToken, '--url', base], {
      PLAZA_CREDENTIALS_FILE: file,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toMatch(/stored unchecked/);
    expect(JSON.parse(login.stdout)).toMatchObject({ verified: false });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: base, token: unknownToken });
  });
});
