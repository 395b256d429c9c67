/**
 * AGIN card text through the real routes and the gateway: POST /api/agents refuses control,
 * format (zero-width, bidi), private-use characters and every look-alike of a reserved owner
 * context (`account:<another account>`, `plaza`) with a 400 in the token shape; it stores the
 * NFKC form with spaces collapsed, so a provider that strips or normalises sees what Plaza does.
 * A recording provider shows what `_meta.platform` and the X-PLATFORM-* headers carry for a
 * Chinese display name, and for a row stored before the check (read in the checked form).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { mintAgentToken } from '../../src/agents/index.ts';
import { newId, systemClock } from '../../src/kernel/index.ts';
import { awaitHealthy, listProvider } from '../support/endpoints.ts';
import { type FaultUpstream, startFaultUpstream } from '../support/fault-upstreams.ts';
import { postMcp } from '../support/json-rpc.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describe('AGIN card text', () => {
  let plaza: TestPlaza;
  let upstream: FaultUpstream;
  const accounts: Record<'a' | 'b', { id: string; apiKey: string }> = {
    a: { id: '', apiKey: '' },
    b: { id: '', apiKey: '' },
  };

  beforeAll(async () => {
    upstream = await startFaultUpstream();
    plaza = await startTestPlaza('pglite', {
      env: {
        PLAZA_DATA_DIR: mkdtempSync(join(tmpdir(), 'plaza-card-')),
        PLAZA_BACKGROUND: '0',
        PLAZA_ALLOW_PRIVATE_TARGETS: '1',
      },
    });
    const service = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    for (const name of ['a', 'b'] as const) {
      const created = await service.createAccount({ email: `${name}@example.com` });
      accounts[name] = { id: created.account.id, apiKey: created.apiKey };
    }
    const id = await listProvider(plaza.url, {
      provider: 'recorder',
      url: upstream.url('ok'),
      registered_by: 'ops@example.com',
      agin_support: true,
      summary: 'Records what it receives; no credentials.',
    });
    await awaitHealthy(plaza.url, id);
  }, 60_000);
  afterAll(async () => {
    await plaza?.close();
    await upstream?.close();
  });

  const createAgent = (body: unknown) =>
    fetch(`${plaza.url}/api/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accounts.a.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** What the recording provider receives for one tools/call of agent `token` through /mcp/p/recorder. */
  async function seenCall(token: string) {
    const from = upstream.seen.length;
    const res = await postMcp(`${plaza.url}/mcp/p/recorder`, token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'act', arguments: { message: 'hi' } },
    });
    expect(res.status).toBe(200);
    await res.text();
    const calls = upstream.seen.slice(from).filter((r) => r.body.method === 'tools/call');
    expect(calls).toHaveLength(1);
    return calls[0]!;
  }

  it.each([
    ['a unit separator before it', '\u001faccount:'],
    ['a zero-width space before it', '\u200baccount:'],
    ['a BOM before it', '\ufeffaccount:'],
    ['a right-to-left override before it', '\u202eaccount:'],
    ['fullwidth letters', 'ａｃｃｏｕｎｔ:'],
    ['a fullwidth colon', 'account：'],
    ['a space before the colon', 'account :'],
    ['spaces around the colon, in capitals', 'ACCOUNT : '],
    ['a Cyrillic а', 'аccount:'],
    ['a zero for the o', 'acc0unt:'],
    ['a non-breaking space before the colon', 'account\u00a0:'],
  ])("refuses an owner_context reading as another account's: %s", async (_name, prefix) => {
    const res = await createAgent({ display_name: 'x', owner_context: `${prefix}${accounts.b.id}` });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({
      success: false,
      code: 'BAD_REQUEST',
      error: { type: 'invalid_request_error', param: 'owner_context' },
      request_id: expect.any(String),
    });
    expect(body.message).toMatch(/^Invalid agent: owner_context: /);
  });

  it.each(['plaza', 'Plaza', 'PLAZA : team', 'ｐｌａｚａ', 'p1aza:x'])(
    "refuses Plaza's own owner_context and its look-alikes (%s)",
    async (value) => {
      const res = await createAgent({ display_name: 'x', owner_context: value });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.param).toBe('owner_context');
    },
  );

  it.each([
    ['display_name', 'a newline', 'Bot\nAdmin'],
    ['display_name', 'a zero-width joiner', 'Bo\u200dt'],
    ['display_name', 'a left-to-right isolate', '\u2066Bot'],
    ['display_name', 'a private-use character', 'Bot\ue000'],
    ['display_name', 'a Hangul filler', '\u3164'],
    ['display_name', 'a line separator', 'Bot\u2028x'],
    ['display_name', 'a lone surrogate', 'Bot\ud800'],
    ['owner_context', 'a tab', 'acme\tteam'],
    ['owner_context', 'a word joiner', 'acme\u2060'],
  ])('refuses a %s holding %s, naming the character', async (field, _name, value) => {
    const res = await createAgent({ display_name: 'x', [field]: value });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.param).toBe(field);
    expect(body.message).toMatch(/holds U\+[0-9A-F]{4,5} \(/);
  });

  it('stores and stamps the NFKC form with spaces collapsed; a Chinese display name reaches the provider as sent', async () => {
    const res = await createAgent({ display_name: '  客服\u3000机器人  ', owner_context: 'ａｃｍｅ  team' });
    expect(res.status).toBe(201);
    const { agent, token } = ((await res.json()) as any).data;
    expect(agent).toMatchObject({ display_name: '客服 机器人', owner_context: 'acme team' });
    const seen = await seenCall(token);
    expect(seen.body.params._meta.platform).toEqual({
      agin_id: agent.agin_id,
      agent_principal: agent.agent_principal,
      display_name: '客服 机器人',
      owner_context: 'acme team',
      call_id: expect.any(String),
    });
    // The raw body carries the name as UTF-8 text, not a look-alike or an escape of something else.
    expect(seen.raw).toContain('"display_name":"客服 机器人"');
    expect(seen.headers['x-platform-agin-id']).toBe(agent.agin_id);
    expect(seen.headers['x-platform-agent-principal']).toBe(agent.agent_principal);
    expect(seen.headers['x-platform-call-id']).toBe(seen.body.params._meta.platform.call_id);
    // Identity headers are ASCII (no display name or owner context travels in a header).
    for (const [name, value] of Object.entries(seen.headers))
      if (name.startsWith('x-platform-')) expect(String(value)).toMatch(/^[\x21-\x7e]+$/);
    expect(
      Object.keys(seen.headers)
        .filter((name) => name.startsWith('x-platform-'))
        .sort(),
    ).toEqual(['x-platform-agent-principal', 'x-platform-agin-assertion', 'x-platform-agin-id', 'x-platform-call-id']);
  });

  it('stamps a card stored before the check in its checked form: refused characters dropped, a claimed account replaced by its own', async () => {
    // As POST /api/agents accepted them until 2026-11-29.
    const credential = mintAgentToken();
    const id = newId('agt');
    await plaza.db.prisma.agent.create({
      data: {
        id,
        accountId: accounts.a.id,
        aginId: `agin_legacy${id.slice(-6)}`,
        agentPrincipal: `principal:${accounts.a.id}/${id}`,
        displayName: '\u202eLegacy\u200b bot',
        ownerContext: `\u200baccount:${accounts.b.id}`,
        credentials: { create: { id: newId('cred'), hash: credential.hash } },
      },
    });
    const seen = await seenCall(credential.secret);
    expect(seen.body.params._meta.platform).toMatchObject({
      display_name: 'Legacy bot',
      owner_context: `account:${accounts.a.id}`,
    });
    const listed = (await (
      await fetch(`${plaza.url}/api/agents`, { headers: { authorization: `Bearer ${accounts.a.apiKey}` } })
    ).json()) as any;
    expect(listed.data.agents.find((a: { id: string }) => a.id === id)).toMatchObject({
      display_name: 'Legacy bot',
      owner_context: `account:${accounts.a.id}`,
    });
  });
});
