import { storedCard } from '../agents/index.ts';
import type { PrismaClient } from '../db/index.ts';

/** The public site assistant every bearer sees (seeded idempotently on first use). */
export const SITE_ASSISTANT = {
  id: 'agt_site_assistant',
  aginId: 'agin_site_assistant',
  agentPrincipal: 'plaza:site-assistant',
  displayName: 'Plaza site assistant',
  ownerContext: 'plaza',
} as const;

/** An agent as `GET /api/agents` shows it (AGIN card fields, spec §2.4). */
export interface AgentView {
  id: string;
  agin_id: string;
  agent_principal: string;
  display_name: string;
  owner_context: string | null;
  status: string;
  public: boolean;
  created_at: string;
}

/** Which agents a bearer may see. */
export interface AgentsDirectory {
  /** Public active agents, plus the account's own when `accountId` is given. */
  visibleTo(accountId: string | undefined): Promise<AgentView[]>;
}

/** Reads the `agents` table; seeds the site assistant row once per process (race-safe insert). */
export function createAgentsDirectory(prisma: PrismaClient): AgentsDirectory {
  let seeded: Promise<unknown> | undefined;
  const seed = () => {
    seeded ??= prisma.agent
      .createMany({ data: [{ ...SITE_ASSISTANT, public: true, status: 'active' }], skipDuplicates: true })
      .catch((error: unknown) => {
        seeded = undefined;
        throw error;
      });
    return seeded;
  };
  return {
    async visibleTo(accountId) {
      await seed();
      const rows = await prisma.agent.findMany({
        where: {
          status: 'active',
          revokedAt: null,
          OR: accountId === undefined ? [{ public: true }] : [{ public: true }, { accountId }],
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: 500,
      });
      return rows.map((row) => ({
        id: row.id,
        agin_id: row.aginId,
        agent_principal: row.agentPrincipal,
        // As the gateway stamps them (a row stored before the card check may hold more).
        display_name: storedCard(row).displayName,
        owner_context: row.ownerContext === null ? null : storedCard(row).ownerContext,
        status: row.status,
        public: row.public,
        created_at: row.createdAt.toISOString(),
      }));
    },
  };
}
