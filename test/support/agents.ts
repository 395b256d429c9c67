/**
 * An account with one agent, made through the services Plaza itself uses (no HTTP): what a gateway
 * test needs before its first call, its bearer token, and the agent service its passthrough or
 * aggregate authenticates with.
 */
import { createAccountService } from '../../src/accounts/index.ts';
import { type AgentService, createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';

type Prisma = Parameters<typeof createAccountService>[0]['prisma'];

export interface TestAgent {
  /** The agent service over `prisma`, for a gateway under test. */
  agents: AgentService;
  token: string;
  agent: Awaited<ReturnType<AgentService['create']>>['agent'];
}

/** Creates the account `email` and its agent with `profile`. */
export async function createTestAgent(
  prisma: Prisma,
  email: string,
  profile: Parameters<AgentService['create']>[1],
): Promise<TestAgent> {
  const account = await createAccountService({ prisma, clock: systemClock }).createAccount({ email });
  const agents = createAgentService({ prisma, clock: systemClock });
  const { token, agent } = await agents.create(account.account.id, profile);
  return { agents, token, agent };
}
