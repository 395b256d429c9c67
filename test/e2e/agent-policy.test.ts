/**
 * Who may call what (issue 35) through a whole Plaza with the official MCP SDK client, on
 * `/mcp/p/<provider>` and `/mcp`, against a recording provider: each rule kind (an allow list, a
 * deny glob, an annotation rule, Plaza's own `platform` tools) lets through what it allows and
 * refuses the rest in-band, never sending it upstream; quotas per agent, per agent × provider, the
 * provider's declared `agin_limits` and the account-wide ceiling refuse the call past them with a
 * retry time; every refusal is receipted `denied` or `rate_limited`, found by `/api/receipts?status=`,
 * and the log verifies with the real `plaza receipts verify`. Bad input is answered 400/401/403/404
 * in the agents API's shape.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { runPlaza } from '../support/cli.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type RecordingCrm, startRecordingCrm } from '../support/policy-upstream.ts';

type Result = { isError?: boolean; content: { type: string; text: string }[]; _meta?: Record<string, any> };

describe.each(BACKENDS)('agent policies on %s', (backend) => {
  let plaza: TestPlaza;
  let crm: RecordingCrm;
  let limited: RecordingCrm;
  let apiKey = '';
  let otherKey = '';
  let limitedId = '';

  async function api(method: string, path: string, body?: unknown, key = apiKey) {
    const res = await fetch(`${plaza.url}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function newAgent(name: string, key = apiKey): Promise<{ id: string; token: string }> {
    const { body } = await api('POST', '/api/agents', { display_name: name }, key);
    return { id: body.data.agent.id, token: body.data.token };
  }

  async function list(provider: string, url: string, key: string, extra: Record<string, unknown> = {}) {
    const { status, body } = await api(
      'POST',
      '/api/mcp/listings',
      { provider, url, registered_by: 'ops@example.com', summary: `The ${provider} CRM.`, ...extra },
      key,
    );
    if (status !== 201) throw new Error(`listing ${provider}: ${status} ${JSON.stringify(body)}`);
    for (let i = 0; i < 150; i++) {
      if ((await api('GET', `/api/mcp/endpoints/${body.id}`)).body.status === 'healthy') return body.id as string;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${provider} did not become healthy`);
  }

  async function connect(path: string, token: string): Promise<Client> {
    const client = new Client({ name: 'policy-agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  }

  async function callAll(path: string, token: string, names: string[]): Promise<Result[]> {
    const client = await connect(path, token);
    try {
      const out: Result[] = [];
      for (const name of names) out.push((await client.callTool({ name, arguments: {} })) as Result);
      return out;
    } finally {
      await client.close();
    }
  }

  async function receiptsOf(agentId: string, status: string) {
    const { body: agents } = await api('GET', '/api/agents');
    const agin = agents.data.agents.find((a: { id: string }) => a.id === agentId).agin_id;
    return (await api('GET', `/api/receipts?status=${status}&agin_id=${agin}`)).body.data.receipts as any[];
  }

  beforeAll(async () => {
    [plaza, crm, limited] = await Promise.all([
      startTestPlaza(backend, { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0' } }),
      startRecordingCrm(),
      startRecordingCrm(),
    ]);
    const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    apiKey = (await accounts.createAccount({ email: 'policy@example.com' })).apiKey;
    otherKey = (await accounts.createAccount({ email: 'other@example.com' })).apiKey;
    await list('crm', crm.url, apiKey);
    limitedId = await list('limited', limited.url, apiKey, { agin_limits: { per_day: 1000 } });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([crm?.close(), limited?.close()]);
    await plaza?.close();
  });

  const ALLOWED = (name: string) => `ran ${name}`;
  const RULE_KINDS: [string, unknown, Record<string, string | RegExp>][] = [
    [
      'an allow list (default deny)',
      { rules: [{ effect: 'allow', provider: 'crm', tool: 'read_*' }] },
      {
        read_contacts: ALLOWED('read_contacts'),
        delete_contact:
          /^Denied by the agent's policy: no rule allows crm\/delete_contact \(default deny\) \(denied\); nothing was called\.$/,
        send_mail: /no rule allows crm\/send_mail \(default deny\)/,
      },
    ],
    [
      'a deny glob',
      { rules: [{ effect: 'deny', provider: 'c?m', tool: 'delete_*' }] },
      {
        read_contacts: ALLOWED('read_contacts'),
        delete_contact: /denied by the agent's policy: rules\[0\] \(deny c\?m\/delete_\*\) \(denied\)/i,
        send_mail: ALLOWED('send_mail'),
      },
    ],
    [
      'an annotation rule (MCP defaults for a tool that says nothing)',
      { rules: [{ effect: 'deny', provider: '*', tool: '*', annotations: { destructiveHint: true } }] },
      {
        read_contacts: ALLOWED('read_contacts'),
        delete_contact: /rules\[0\] \(deny \*\/\* when destructiveHint=true\)/,
        send_mail: /rules\[0\] \(deny \*\/\* when destructiveHint=true\)/,
      },
    ],
  ];

  describe.each([
    ['/mcp/p/crm', ''],
    ['/mcp', 'crm__'],
  ])('on %s', (path, prefix) => {
    it.each(RULE_KINDS)(
      '%s: allowed calls pass, the others are refused in-band, receipted, never sent',
      async (_kind, policy, expected) => {
        const agent = await newAgent(`rules ${path}`);
        const put = await api('PUT', `/api/agents/${agent.id}/policy`, policy);
        expect(put.status, JSON.stringify(put.body)).toBe(200);
        const names = Object.keys(expected);
        const before = crm.called.length;
        const results = await callAll(
          path,
          agent.token,
          names.map((n) => `${prefix}${n}`),
        );
        const ran: string[] = [];
        names.forEach((name, i) => {
          const want = expected[name]!;
          const result = results[i]!;
          if (typeof want === 'string') {
            expect(result.isError, name).toBeFalsy();
            expect(result.content[0]!.text).toBe(want);
            ran.push(name);
          } else {
            expect(result.isError, name).toBe(true);
            expect(result.content[0]!.text).toMatch(want);
            expect(result._meta?.['platform']?.call_id).toMatch(/^call_/);
          }
        });
        expect(crm.called.slice(before)).toEqual(ran);
        const denied = await receiptsOf(agent.id, 'denied');
        expect(denied.map((r) => r.tool).sort()).toEqual(names.filter((n) => !ran.includes(n)).sort());
        for (const r of denied) expect(r.outcome).toMatch(/^refused by Plaza: denied by the agent's policy: /);
        expect(await receiptsOf(agent.id, 'ok')).toHaveLength(ran.length);
      },
    );
  });

  it("refuses Plaza's own tools by a `platform` rule on /mcp and /mcp/p/platform", async () => {
    const agent = await newAgent('platform rule');
    const [before] = await callAll('/mcp/p/platform', agent.token, ['account_auth_options']);
    expect(before!.isError).toBeFalsy();
    await api('PUT', `/api/agents/${agent.id}/policy`, {
      rules: [{ effect: 'deny', provider: 'platform', tool: 'account_*' }],
    });
    const [direct] = await callAll('/mcp/p/platform', agent.token, ['account_auth_options']);
    const [aggregated] = await callAll('/mcp', agent.token, ['platform__account_auth_options']);
    for (const refused of [direct!, aggregated!]) {
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toMatch(/rules\[0\] \(deny platform\/account_\*\)/);
    }
    expect((await receiptsOf(agent.id, 'denied')).map((r) => r.provider)).toEqual(['platform', 'platform']);
  });

  it('counts an agent’s calls on both entry points against its limit and refuses the next with a retry time', async () => {
    const agent = await newAgent('quota');
    await api('PUT', `/api/agents/${agent.id}/policy`, { limits: { per_day: 2, per_minute: 1000 } });
    const before = crm.called.length;
    const [first] = await callAll('/mcp/p/crm', agent.token, ['read_contacts']);
    const [second, third] = await callAll('/mcp', agent.token, ['crm__read_contacts', 'crm__send_mail']);
    expect([first!.isError, second!.isError]).toEqual([undefined, undefined]);
    expect(third!.isError).toBe(true);
    expect(third!.content[0]!.text).toMatch(
      /^Rate limited: the agent's policy's limit of 2 calls per day \(limits\.per_day\) is reached \(rate_limited\); retry in \d+ s; nothing was called\.$/,
    );
    expect(third!._meta?.['retryAfterS']).toBeGreaterThan(0);
    expect(crm.called.slice(before)).toEqual(['read_contacts', 'read_contacts']);
    const [limitedReceipt] = await receiptsOf(agent.id, 'rate_limited');
    expect(limitedReceipt.outcome).toMatch(/^refused by Plaza: rate limited: .*limits\.per_day/);
    const usage = (await api('GET', `/api/agents/${agent.id}/policy`)).body.data.usage;
    expect(usage.day).toMatchObject({ used: 2, limit: 2 });
    expect(usage.minute).toMatchObject({ used: 2, limit: 1000 });
  });

  it('holds an agent to its per-provider limit, and to the one the provider declares on its listing', async () => {
    // The provider lowers its declared limit (before any call read it: an instance reads it again within 2 s).
    const patched = await api('PATCH', `/api/mcp/listings/${limitedId}`, { agin_limits: { per_day: 1 } });
    expect(patched.body.agin_limits).toEqual({ per_day: 1 });
    expect((await api('GET', `/api/mcp/endpoints/${limitedId}`)).body.agin_limits).toEqual({ per_day: 1 });
    expect((await api('PATCH', `/api/mcp/listings/${limitedId}`, { agin_limits: { per_day: 0 } })).status).toBe(400);

    const agent = await newAgent('per provider');
    await api('PUT', `/api/agents/${agent.id}/policy`, { limits: { per_provider: { crm: { per_day: 1 } } } });
    const results = await callAll('/mcp', agent.token, [
      'crm__read_contacts',
      'crm__read_contacts',
      'limited__read_contacts',
    ]);
    expect(results.map((r) => r.isError ?? false)).toEqual([false, true, false]);
    expect(results[1]!.content[0]!.text).toMatch(
      /limit of 1 calls per day to crm \(limits\.per_provider\.crm\.per_day\)/,
    );
    const usage = (await api('GET', `/api/agents/${agent.id}/policy`)).body.data.usage;
    expect(usage.per_provider.crm.day).toMatchObject({ used: 1, limit: 1 });

    // Every agent is held to the provider's limit, with or without a policy of its own.
    const fresh = await newAgent('no policy');
    const before = limited.called.length;
    const declared = await callAll('/mcp/p/limited', fresh.token, ['read_contacts', 'read_contacts']);
    expect(declared.map((r) => r.isError ?? false)).toEqual([false, true]);
    expect(declared[1]!.content[0]!.text).toMatch(
      /provider limited's limit of 1 calls per day per agent \(its listing's agin_limits\.per_day\)/,
    );
    expect(limited.called.length - before).toBe(1);
  });

  it('holds all agents of an account to its ceiling', async () => {
    const key = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'ceiling@example.com',
      })
    ).apiKey;
    const put = await api('PUT', '/api/account/agent-policy', { limits: { per_day: 3 } }, key);
    expect(put.body.data).toMatchObject({ default_policy: null, limits: { per_day: 3 } });
    const [a, b] = [await newAgent('a', key), await newAgent('b', key)];
    const first = await callAll('/mcp/p/crm', a.token, ['read_contacts', 'read_contacts']);
    const second = await callAll('/mcp/p/crm', b.token, ['read_contacts', 'read_contacts']);
    expect([...first, ...second].map((r) => r.isError ?? false)).toEqual([false, false, false, true]);
    expect(second[1]!.content[0]!.text).toMatch(/the account's ceiling of 3 calls per day for all its agents/);
    const account = (await api('GET', '/api/account/agent-policy', undefined, key)).body.data;
    expect(account.usage.day).toMatchObject({ used: 3, limit: 3 });
  });

  it('applies the account default to agents without a policy, and DELETE returns an agent to it', async () => {
    const key = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'default@example.com',
      })
    ).apiKey;
    const agent = await newAgent('defaulted', key);
    await api(
      'PUT',
      '/api/account/agent-policy',
      { default_policy: { rules: [{ effect: 'allow', provider: 'crm', tool: 'read_*' }] } },
      key,
    );
    await api('PUT', `/api/agents/${agent.id}/policy`, { default: 'allow', rules: [] }, key);
    expect((await callAll('/mcp/p/crm', agent.token, ['send_mail']))[0]!.isError).toBeFalsy();
    const removed = await api('DELETE', `/api/agents/${agent.id}/policy`, undefined, key);
    expect(removed.body.data.policy).toBeNull();
    expect(removed.body.data.effective).toMatchObject({
      default: 'deny',
      rules: [{ effect: 'allow', tool: 'read_*' }],
    });
    const [refused] = await callAll('/mcp/p/crm', agent.token, ['send_mail']);
    expect(refused!.content[0]!.text).toMatch(/denied by the account's default policy: no rule allows crm\/send_mail/i);
  });

  it('answers bad input in the agents API shape: 400 naming the rule, 401, 403, 404 for another account’s agent', async () => {
    const agent = await newAgent('bad input');
    const malformed = await api('PUT', `/api/agents/${agent.id}/policy`, {
      rules: [
        { effect: 'allow', provider: 'crm', tool: 'read_*' },
        { effect: 'deny', provider: 'crm', tool: '' },
      ],
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({
      success: false,
      code: 'BAD_REQUEST',
      message: 'Invalid policy: rule 1: rules[1].tool: must not be empty.',
      error: { code: 'BAD_REQUEST', param: 'rules[1].tool' },
    });
    expect((await api('PUT', `/api/agents/${agent.id}/policy`, { limits: { per_day: -1 } })).status).toBe(400);
    expect((await api('PUT', '/api/account/agent-policy', { limits: { per_hour: 1 } })).status).toBe(400);
    expect((await api('PUT', `/api/agents/${agent.id}/policy`, [])).status).toBe(400);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const foreign = await api(method, `/api/agents/${agent.id}/policy`, method === 'PUT' ? {} : undefined, otherKey);
      expect(foreign.status, method).toBe(404);
      expect(foreign.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
      expect((await api(method, `/api/agents/${agent.id}/policy`, method === 'PUT' ? {} : undefined, '')).status).toBe(
        401,
      );
    }
    expect((await api('GET', '/api/agents/agt_nosuch/policy')).status).toBe(404);
    const guest = (await api('POST', '/api/auth/guest-token', {}, '')).body.data?.token;
    if (guest) expect((await api('GET', `/api/agents/${agent.id}/policy`, undefined, guest)).status).toBe(403);
    // The malformed policy changed nothing.
    expect((await api('GET', `/api/agents/${agent.id}/policy`)).body.data.policy).toBeNull();
  });

  it('keeps a receipt log with the refusals that `plaza receipts verify` accepts', async () => {
    const ok = await runPlaza(['receipts', 'verify', '--url', plaza.url, '--key', apiKey], {});
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/OK: \d+ receipt\(s\) verified/);
    expect((await api('GET', '/api/receipts?status=rate_limited')).body.data.count).toBeGreaterThan(0);
    expect((await api('GET', '/api/receipts?status=refused')).status).toBe(400);
  });
});
