/**
 * Pins `plaza agents policy show|set|clear` against a real Plaza: the agent named by display name,
 * AGIN id or id; the options become the policy the API then holds; `show` says the own and the
 * applied policy and the calls against each limit; `--file` takes a document (also `show --json`'s
 * answer); `clear` removes it. Errors are one line: a usage error exits 2 before anything is sent,
 * a refusal of the server (bad key, another account's agent, a malformed rule) exits 1 with the
 * server's words.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { runPlaza } from '../support/cli.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe('plaza agents policy', () => {
  let plaza: TestPlaza;
  let key = '';
  let agent = { id: '', agin_id: '' };
  let strangersAgent = '';
  const dir = mkdtempSync(join(tmpdir(), 'plaza-policy-cli-'));

  beforeAll(async () => {
    plaza = await startTestPlaza('pglite', { env: { PLAZA_BACKGROUND: '0' } });
    const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    const agents = createAgentService({ prisma: plaza.db.prisma, clock: systemClock });
    const mine = await accounts.createAccount({ email: 'policy-cli@example.com' });
    key = mine.apiKey;
    agent = (await agents.create(mine.account.id, { display_name: 'Support bot' })).agent;
    const stranger = await accounts.createAccount({ email: 'stranger@example.com' });
    strangersAgent = (await agents.create(stranger.account.id, { display_name: 'Theirs' })).agent.id;
  });
  afterAll(async () => {
    await plaza?.close();
  });

  const policy = (...args: string[]) =>
    runPlaza(['agents', 'policy', ...args, '--url', plaza.url], { PLAZA_API_KEY: key });
  const held = async () =>
    (
      (await (
        await fetch(`${plaza.url}/api/agents/${agent.id}/policy`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { data: { policy: unknown } }
    ).data.policy;

  it('sets the policy the options describe on the agent named by its display name', async () => {
    const set = await policy(
      'set',
      'Support bot',
      '--allow',
      'crm/read_*',
      '--allow',
      'platform/*',
      '--deny-annotation',
      'destructiveHint',
      '--per-day',
      '100',
      '--provider-limit',
      'crm:10/50',
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`Agent Support bot (${agent.id}), AGIN ${agent.agin_id}`);
    expect(set.stdout).toMatch(/allow {2}crm\/read_\*/);
    expect(await held()).toEqual({
      rules: [
        { effect: 'allow', provider: 'crm', tool: 'read_*' },
        { effect: 'allow', provider: 'platform', tool: '*' },
        { effect: 'deny', provider: '*', tool: '*', annotations: { destructiveHint: true } },
      ],
      limits: { per_day: 100, per_provider: { crm: { per_minute: 10, per_day: 50 } } },
    });
  });

  it('shows the own policy, the applied one and the calls against each limit, by AGIN id', async () => {
    const show = await policy('show', agent.agin_id);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('Own policy:');
    expect(show.stdout).toContain('Applied by the gateway:');
    expect(show.stdout).toMatch(/today: 0 \/ 100, 100 left/);
    expect(show.stdout).toMatch(/crm: minute: 0 \/ 10, 10 left; day: 0 \/ 50, 50 left/);
    const json = await policy('show', agent.id, '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      policy: { limits: { per_day: 100 } },
      usage: { day: { used: 0 } },
    });
  });

  it('takes a whole document with --file, also the answer of show --json', async () => {
    const file = join(dir, 'policy.json');
    writeFileSync(file, JSON.stringify({ default: 'deny', rules: [{ effect: 'allow', provider: 'crm', tool: '*' }] }));
    const set = await policy('set', agent.id, '--file', file);
    expect(set.code, set.stderr).toBe(0);
    expect(await held()).toEqual({ default: 'deny', rules: [{ effect: 'allow', provider: 'crm', tool: '*' }] });
    const shown = await policy('show', agent.id, '--json');
    writeFileSync(file, shown.stdout);
    const again = await policy('set', agent.id, '--file', file);
    expect(again.code, again.stderr).toBe(0);
    expect(await held()).toEqual({ default: 'deny', rules: [{ effect: 'allow', provider: 'crm', tool: '*' }] });
  });

  it('clears the policy: the account default applies again', async () => {
    const clear = await policy('clear', 'Support bot');
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stdout).toBe('Cleared: Support bot follows the account default policy.\n');
    expect(await held()).toBeNull();
    expect((await policy('show', agent.id)).stdout).toContain('Own policy: none (the account default applies)');
  });

  it.each([
    [['set', 'Support bot', '--allow', 'crm'], /--allow crm: write <provider>\/<tool>/],
    [['set', 'Support bot'], /say what the agent may do/],
    [['set', 'Support bot', '--per-day', 'lots'], /--per-day: lots is not a whole number/],
    [['set', 'Support bot', '--file', '/nonexistent.json', '--per-day', '5'], /--file holds the whole policy/],
    [['show', 'Nobody'], /no agent Nobody in this account/],
  ])('refuses %j as a usage error in one line (exit 2)', async (args, message) => {
    const result = await policy(...args);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
  });

  it('needs an account API key (exit 2) and says in one line when the server refuses it (exit 1)', async () => {
    const none = await runPlaza(['agents', 'policy', 'show', agent.id, '--url', plaza.url], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/pass --key <account API key> or set PLAZA_API_KEY/);
    const wrong = await runPlaza(['agents', 'policy', 'show', agent.id, '--url', plaza.url, '--key', 'plz_wrong'], {});
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^plaza agents policy show: GET \/api\/agents answered 401/);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
  });

  it("refuses another account's agent and a malformed rule with the server's words (exit 1)", async () => {
    const theirs = await policy('set', strangersAgent, '--per-day', '5');
    expect(theirs.code).toBe(1);
    expect(theirs.stderr).toMatch(/PUT \/api\/agents\/agt_\w+\/policy answered 40[34]/);
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ rules: [{ effect: 'allow', provider: 'crm', tool: '*' }, { effect: 'maybe' }] }),
    );
    const bad = await policy('set', agent.id, '--file', file);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/answered 400: .*rules?\W*1/);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('says in one line that Plaza cannot be reached (exit 1)', async () => {
    const result = await runPlaza(['agents', 'policy', 'show', agent.id, '--url', 'http://127.0.0.1:9'], {
      PLAZA_API_KEY: key,
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(
      /^plaza agents policy show: cannot reach http:\/\/127\.0\.0\.1:9\/api\/agents: /,
    );
  });
});
