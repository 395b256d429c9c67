/**
 * Pins the agent routes for a signed-in browser: the session cookie (with its CSRF header on
 * writes) lists and creates the account's agents with no API key, a write without the header is
 * refused, an Authorization header always wins over the cookie; and `POST /api/agents/:id/token`
 * replaces a lost credential (the old one stops working at the gateway), for the owner only and
 * never for a revoked agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await smtp?.close();
});

const LINK = /https?:\/\/\S+\/sign-in\?token=([\w-]+)/;

describe.each(BACKENDS)('agents for a signed-in session on %s', (backend) => {
  let plaza: TestPlaza;

  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { SMTP_URL: smtp.url, PLAZA_BACKGROUND: '0' } });
  });
  afterAll(async () => {
    await plaza?.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${plaza.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  /** Signs `email` in through its e-mailed link; the session cookie and its CSRF token. */
  async function signIn(email: string): Promise<{ cookie: string; csrf: string }> {
    expect((await post('/api/auth/email/register-link', { email })).status).toBe(202);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && LINK.test(m.text));
    const res = await post('/api/auth/email/verify', { token: LINK.exec(mail.text)![1] });
    expect(res.status).toBe(200);
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    return { cookie, csrf: ((await res.json()) as any).session.csrf_token };
  }

  /** The gateway's answer to an MCP initialize with `token`: 200, or 401 for a refused credential. */
  const gatewayStatus = async (token: string) =>
    (
      await post(
        '/mcp',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' },
      )
    ).status;

  it('lists and creates agents with the session cookie and its CSRF header, no API key', async () => {
    const { cookie, csrf } = await signIn(`s1-${backend}@example.com`);
    const created = await post('/api/agents', { display_name: 'Cookie bot' }, { cookie, 'x-csrf-token': csrf });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { agent, token } = ((await created.json()) as any).data;
    expect(token).toMatch(/^agt_/);
    expect(await gatewayStatus(token)).toBe(200);

    const listed = await fetch(`${plaza.url}/api/agents`, { headers: { cookie } });
    expect(listed.status).toBe(200);
    const agents = ((await listed.json()) as any).data.agents;
    expect(agents.find((a: any) => a.id === agent.id)).toMatchObject({ display_name: 'Cookie bot', public: false });

    const keys = (await (await fetch(`${plaza.url}/api/account/keys`, { headers: { cookie } })).json()) as any;
    expect(keys.keys).toEqual([]);
  });

  it('refuses a cookie-authenticated write without the CSRF header, and lets Authorization win over the cookie', async () => {
    const { cookie, csrf } = await signIn(`s2-${backend}@example.com`);
    const before = ((await (await fetch(`${plaza.url}/api/agents`, { headers: { cookie } })).json()) as any).data.agents
      .length;
    const noCsrf = await post('/api/agents', { display_name: 'Forged' }, { cookie });
    expect(noCsrf.status).toBe(403);
    expect(((await noCsrf.json()) as any).message).toMatch(/X-CSRF-Token/);
    const wrongCsrf = await post('/api/agents', { display_name: 'Forged' }, { cookie, 'x-csrf-token': 'nope' });
    expect(wrongCsrf.status).toBe(403);
    const badBearer = await post(
      '/api/agents',
      { display_name: 'Forged' },
      { cookie, 'x-csrf-token': csrf, authorization: 'Bearer plz_nope' },
    );
    expect(badBearer.status).toBe(401);
    const after = ((await (await fetch(`${plaza.url}/api/agents`, { headers: { cookie } })).json()) as any).data.agents
      .length;
    expect(after).toBe(before);
    // Signed out, the routes still ask for a credential.
    expect((await fetch(`${plaza.url}/api/agents`, { headers: { cookie: 'plaza_session=nope' } })).status).toBe(401);
    expect((await post('/api/agents', { display_name: 'x' })).status).toBe(401);
  });

  it('issues a new token for a lost one: the old stops working; only the owner, never a revoked agent', async () => {
    const owner = await signIn(`s3-${backend}@example.com`);
    const other = await signIn(`s4-${backend}@example.com`);
    const key = (
      (await (
        await post('/api/account/keys', { name: 'cli' }, { cookie: owner.cookie, 'x-csrf-token': owner.csrf })
      ).json()) as any
    ).api_key;
    const bearer = { authorization: `Bearer ${key}` };
    const { agent, token: first } = (
      (await (await post('/api/agents', { display_name: 'Lost token bot' }, bearer)).json()) as any
    ).data;

    const rotated = await post(`/api/agents/${agent.id}/token`, {}, bearer);
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    const second = ((await rotated.json()) as any).data.token;
    expect(second).toMatch(/^agt_/);
    expect(second).not.toBe(first);
    expect(await gatewayStatus(first)).toBe(401);
    expect(await gatewayStatus(second)).toBe(200);

    // The session may do it too (with its CSRF header); another account may not.
    const third = (
      (await (
        await post(`/api/agents/${agent.id}/token`, {}, { cookie: owner.cookie, 'x-csrf-token': owner.csrf })
      ).json()) as any
    ).data.token;
    expect(await gatewayStatus(second)).toBe(401);
    expect(await gatewayStatus(third)).toBe(200);
    expect((await post(`/api/agents/${agent.id}/token`, {}, { cookie: owner.cookie })).status).toBe(403);
    expect(
      (await post(`/api/agents/${agent.id}/token`, {}, { cookie: other.cookie, 'x-csrf-token': other.csrf })).status,
    ).toBe(404);
    expect(await gatewayStatus(third)).toBe(200);

    expect((await post(`/api/agents/${agent.id}/revoke`, {}, bearer)).status).toBe(200);
    const revoked = await post(`/api/agents/${agent.id}/token`, {}, bearer);
    expect(revoked.status).toBe(409);
    expect(((await revoked.json()) as any).message).toMatch(/revoked; create a new agent/);
  });
});
