/**
 * Pins agents and their AGIN cards at the service level: creation with a one-time credential,
 * owner scoping (an owner_context of another account's form refused), credential checks, revocation taking effect within the cache TTL, and racing
 * token rotations leaving one live credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { type AgentService, createAgentService } from '../../src/agents/index.ts';
import { AuthError, type Clock, NotFoundError, ValidationError } from '../../src/kernel/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';

describe.each(BACKENDS)('agents on %s', (backend) => {
  let t: TestDatabase;
  let agents: AgentService;
  let now = Date.parse('2026-11-21T12:00:00Z');
  const clock: Clock = { now: () => now };
  let accountA = '';
  let accountB = '';

  beforeAll(async () => {
    t = await createTestDatabase(backend);
    const accounts = createAccountService({ prisma: t.db.prisma, clock });
    accountA = (await accounts.createAccount({ email: 'a@example.com' })).account.id;
    accountB = (await accounts.createAccount({ email: 'b@example.com' })).account.id;
    agents = createAgentService({ prisma: t.db.prisma, clock, cacheTtlMs: 2_000 });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('creates an agent with an AGIN card and a credential that authenticates', async () => {
    const { agent, token } = await agents.create(accountA, {
      display_name: 'Support bot',
      owner_context: 'acme-support',
    });
    expect(agent).toMatchObject({ display_name: 'Support bot', owner_context: 'acme-support', status: 'active' });
    expect(agent.agin_id).toMatch(/^agin_/);
    expect(token).toMatch(/^agt_/);
    const identity = await agents.authenticate(token);
    expect(identity).toMatchObject({
      agentId: agent.id,
      accountId: accountA,
      aginId: agent.agin_id,
      agentPrincipal: agent.agent_principal,
    });
  });

  it.each([
    [{}, 'display_name'],
    [{ display_name: '' }, 'display_name'],
    [{ display_name: 'x', owner_context: 'y'.repeat(201) }, 'owner_context'],
    [{ display_name: 'x', admin: true }, ''],
  ])('rejects %j', async (body, param) => {
    const error = await agents.create(accountA, body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    if (param) expect((error as ValidationError).param).toBe(param);
  });

  it.each(['account:', 'ACCOUNT:', 'Account:'])(
    "refuses an owner_context claiming another account's context (%s<other account>)",
    async (prefix) => {
      const error = await agents
        .create(accountA, { display_name: 'x', owner_context: `${prefix}${accountB}` })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).param).toBe('owner_context');
      expect((error as ValidationError).message).toMatch(/owner_context: "account:…" is reserved/);
    },
  );

  it("takes an owner_context naming the agent's own account, as the default does", async () => {
    expect(
      (await agents.create(accountA, { display_name: 'x', owner_context: `account:${accountA}` })).agent.owner_context,
    ).toBe(`account:${accountA}`);
    expect((await agents.create(accountA, { display_name: 'y' })).agent.owner_context).toBe(`account:${accountA}`);
  });

  it('scopes listing and revocation to the owner', async () => {
    const { agent } = await agents.create(accountB, { display_name: 'B bot' });
    expect((await agents.list(accountA)).map((a) => a.id)).not.toContain(agent.id);
    await expect(agents.revoke(accountA, agent.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('stops accepting a revoked credential within the cache TTL', async () => {
    const { agent, token } = await agents.create(accountA, { display_name: 'Temp' });
    const otherInstance = createAgentService({ prisma: t.db.prisma, clock, cacheTtlMs: 2_000 });
    await otherInstance.authenticate(token);
    await agents.revoke(accountA, agent.id);
    await expect(agents.authenticate(token)).rejects.toBeInstanceOf(AuthError);
    now += 2_001;
    await expect(otherInstance.authenticate(token)).rejects.toBeInstanceOf(AuthError);
  });

  it('checks a token once for all the calls that find its entry stale at the same moment, and keeps no check a revoke overtook', async () => {
    const { agent, token } = await agents.create(accountA, { display_name: 'Busy' });
    let reads = 0;
    let release: (() => void) | undefined;
    const counted = new Proxy(t.db.prisma, {
      get: (target, name, receiver) =>
        name === 'agentCredential'
          ? {
              findUnique: async (...args: Parameters<typeof target.agentCredential.findUnique>) => {
                reads++;
                // Held until the test lets it go: a read still under way.
                if (release === undefined) await new Promise<void>((r) => (release = r));
                return target.agentCredential.findUnique(...args);
              },
            }
          : Reflect.get(target, name, receiver),
    });
    const instance = createAgentService({ prisma: counted, clock, cacheTtlMs: 2_000 });
    // 32 calls at once, as under load when the entry expires: one read answers them all.
    const checks = Promise.all(Array.from({ length: 32 }, () => instance.authenticate(token)));
    await new Promise((r) => setTimeout(r, 20));
    // The agent is revoked on this instance while that read is under way.
    instance.forget(agent.id);
    release!();
    expect((await checks).every((identity) => identity.agentId === agent.id)).toBe(true);
    expect(reads).toBe(1);
    // The overtaken read was answered but not kept: the next call reads again.
    await instance.authenticate(token);
    expect(reads).toBe(2);
    await instance.authenticate(token);
    expect(reads).toBe(2);
  });

  it('names the field a bad agent body gets wrong, and the credential it was given by mistake', async () => {
    await expect(agents.create(accountA, {})).rejects.toThrow(/^Invalid agent: display_name: /);
    await expect(agents.create(accountA, { displayName: 'x' })).rejects.toThrow(
      /unknown field\(s\) displayName; an agent takes display_name and owner_context/,
    );
    await expect(agents.authenticate('plz_abcdefgh_0123456789')).rejects.toThrow(
      /account API key \(plz_…\); the gateway takes an agent token/,
    );
    const accounts = createAccountService({ prisma: t.db.prisma, clock });
    const { token } = await agents.create(accountA, { display_name: 'Mistaken' });
    await expect(accounts.authenticateApiKey(token)).rejects.toThrow(
      /This is an agent token \(agt_…\).*takes an account API key/,
    );
  });

  it('leaves exactly one live credential when token rotations race', async () => {
    const { agent } = await agents.create(accountA, { display_name: 'Racing' });
    // Separate service instances, as on several gateway instances; each rotation caches nothing.
    const rotations = await Promise.all(
      Array.from({ length: 6 }, () =>
        createAgentService({ prisma: t.db.prisma, clock, cacheTtlMs: 0 }).rotateToken(accountA, agent.id),
      ),
    );
    const live = await t.db.prisma.agentCredential.findMany({ where: { agentId: agent.id, revokedAt: null } });
    expect(live).toHaveLength(1);
    const fresh = createAgentService({ prisma: t.db.prisma, clock, cacheTtlMs: 0 });
    const accepted = await Promise.all(
      rotations.map(({ token }) =>
        fresh.authenticate(token).then(
          () => token,
          () => undefined,
        ),
      ),
    );
    expect(accepted.filter(Boolean)).toHaveLength(1);
  });

  it('refuses garbage and unknown credentials', async () => {
    await expect(agents.authenticate('nope')).rejects.toBeInstanceOf(AuthError);
    await expect(agents.authenticate(`agt_${'a'.repeat(13)}_${'b'.repeat(40)}`)).rejects.toBeInstanceOf(AuthError);
  });
});
