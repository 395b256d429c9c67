/**
 * `plaza agents login --browser` and `plaza mcp connect` with a browser sign-in (issue 34): the
 * command registers itself, prints the authorization URL (its loopback listener is the redirect
 * URI), the test plays the browser (sign-in, consent: a new agent), the command stores the tokens;
 * the stdio bridge then calls the provider as that agent; when the gateway refuses the expired
 * access token, the bridge renews it with the refresh token (rotated, written back) and the call
 * goes through; a sign-in for another endpoint is refused by the bridge before anything is sent.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService, createSessionService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { startChild } from '../support/children.ts';
import { childEnv, freePort, plazaArgs, runPlaza } from '../support/cli.ts';
import { awaitHealthy } from '../support/endpoints.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';
import { approveInBrowser } from '../support/oauth.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe('plaza agents login --browser', () => {
  let plaza: TestPlaza;
  let upstream: SdkUpstream;
  let session = { token: '', csrfToken: '' };
  const credentials = join(mkdtempSync(join(tmpdir(), 'plaza-oauth-cli-')), 'credentials.json');

  beforeAll(async () => {
    const port = await freePort();
    [plaza, upstream] = await Promise.all([
      startTestPlaza('pglite', {
        port,
        env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, PLAZA_ALLOW_PRIVATE_TARGETS: '1' },
      }),
      startSdkUpstream(),
    ]);
    const account = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'cli@example.com',
    });
    session = await createSessionService({ prisma: plaza.db.prisma, clock: systemClock }).create(account.account.id);
    const listed = await fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: 'echoes',
        url: upstream.url,
        registered_by: 'cli@example.com',
        agin_support: true,
        summary: 'Echo provider for the CLI sign-in test.',
      }),
    });
    const { id } = (await listed.json()) as { id: string };
    expect((await awaitHealthy(plaza.url, id)).status).toBe('healthy');
  }, 60_000);

  afterAll(async () => {
    await upstream?.close();
    await plaza?.close();
  });

  async function bridgeCall(message: string): Promise<unknown> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: plazaArgs('mcp', 'connect', 'echoes'),
      env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials }) as Record<string, string>,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'cli-oauth', version: '1' });
    await client.connect(transport);
    try {
      return (await client.callTool({ name: 'echo', arguments: { message } })).content;
    } finally {
      await client.close();
    }
  }

  it('signs in through the browser, then bridges as the chosen agent and renews an expired token', async () => {
    const login = startChild(
      process.execPath,
      plazaArgs('agents', 'login', '--browser', '--no-open', '--provider', 'echoes', '--url', plaza.url),
      { env: childEnv({ PLAZA_CREDENTIALS_FILE: credentials }) },
    );
    const exited = new Promise<number | null>((resolve) => login.on('exit', (code) => resolve(code)));
    let stderr = '';
    let stdout = '';
    login.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const url = await new Promise<URL>((resolve, reject) => {
      login.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = /in your browser: (\S+)/.exec(stderr);
        if (found) resolve(new URL(found[1]!));
      });
      login.on('exit', () => reject(new Error(`login exited: ${stderr}`)));
    });
    const redirect = url.searchParams.get('redirect_uri')!;
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(url.searchParams.get('resource')).toBe(`${plaza.url}/mcp/p/echoes`);
    const callback = await approveInBrowser(plaza.url, url, redirect, {
      session,
      agent: 'new',
      displayName: 'Terminal agent',
    });
    const landed = await fetch(callback);
    expect(await landed.text()).toContain('Signed in');
    expect(await exited, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      stored: credentials,
      resource: `${plaza.url}/mcp/p/echoes`,
      verified: true,
    });
    const stored = JSON.parse(readFileSync(credentials, 'utf8')) as {
      token: string;
      oauth: { refreshToken: string; resource: string };
    };
    expect(stored.oauth.resource).toBe(`${plaza.url}/mcp/p/echoes`);

    // The access token runs out before its first use (its record says so; not waited for): the
    // gateway refuses it, and the bridge renews it with the refresh token and sends again.
    const past = new Date(Date.now() - 1000);
    const record = await plaza.db.prisma.oAuthRecord.findUniqueOrThrow({
      where: { kind_id: { kind: 'AccessToken', id: stored.token } },
    });
    await plaza.db.prisma.oAuthRecord.update({
      where: { kind_id: { kind: 'AccessToken', id: stored.token } },
      data: { expiresAt: past, payload: { ...(record.payload as object), exp: Math.floor(past.getTime() / 1000) } },
    });
    expect(await bridgeCall('one')).toEqual([{ type: 'text', text: 'echo: one' }]);
    expect(
      upstream.seen.filter((s) => s.body?.method === 'tools/call').at(-1)?.body.params._meta.platform,
    ).toMatchObject({ display_name: 'Terminal agent' });
    const renewed = JSON.parse(readFileSync(credentials, 'utf8')) as typeof stored & { oauth: { expiresAt: number } };
    expect(renewed.token).not.toBe(stored.token);
    expect(renewed.oauth.refreshToken).not.toBe(stored.oauth.refreshToken);

    // A token the file says is about to expire is renewed before it is sent.
    writeFileSync(credentials, JSON.stringify({ ...renewed, oauth: { ...renewed.oauth, expiresAt: Date.now() } }), {
      mode: 0o600,
    });
    expect(await bridgeCall('two')).toEqual([{ type: 'text', text: 'echo: two' }]);
    const again = JSON.parse(readFileSync(credentials, 'utf8')) as typeof stored;
    expect(again.token).not.toBe(renewed.token);
    expect(again.oauth.refreshToken).not.toBe(renewed.oauth.refreshToken);
  });

  it('refuses to bridge to another endpoint than the sign-in is for', async () => {
    const other = await runPlaza(['mcp', 'connect', 'crm'], { PLAZA_CREDENTIALS_FILE: credentials }, 30_000);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`the stored sign-in is for ${plaza.url}/mcp/p/echoes, not ${plaza.url}/mcp/p/crm`);
  });
});
