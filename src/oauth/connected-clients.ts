import type { PrismaClient } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';

/** One OAuth client an agent is connected to (a live grant), as the Account page lists it. */
export interface ConnectedClient {
  grant_id: string;
  client_id: string;
  /** The name the client registered with; null for a client known by its metadata document URL (not fetched to list it). */
  client_name: string | null;
  /** `document`: a Client ID Metadata Document URL; `registration`: registered with Plaza (RFC 7591). */
  identified_by: 'document' | 'registration';
  /** The gateway endpoints the grant covers. */
  resources: string[];
  connected_at: string;
  expires_at: string | null;
}

/** The grants of an agent: listed, and ended one at a time ("disconnect"). */
export interface ConnectedClients {
  /** The agent's live grants, newest first. */
  list(agentId: string): Promise<ConnectedClient[]>;
  /** Ends one grant of the agent and every code and token issued under it; false when the agent has no such grant. */
  disconnect(agentId: string, grantId: string): Promise<boolean>;
}

interface GrantPayload {
  clientId?: string;
  iat?: number;
  resources?: Record<string, string>;
}

/**
 * Reads the authorization server's records directly: a grant row carries its agent (the adapter
 * stores it), so listing needs no provider and never fetches a client's metadata document.
 */
export function createConnectedClients(deps: { prisma: PrismaClient; clock: Clock }): ConnectedClients {
  const { prisma, clock } = deps;
  return {
    async list(agentId) {
      const now = new Date(clock.now());
      const grants = await prisma.oAuthRecord.findMany({
        where: { kind: 'Grant', agentId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
        take: 200,
      });
      const clientIds = [
        ...new Set(
          grants.map((g) => (g.payload as GrantPayload).clientId).filter((id): id is string => typeof id === 'string'),
        ),
      ];
      const registered = await prisma.oAuthRecord.findMany({ where: { kind: 'Client', id: { in: clientIds } } });
      const names = new Map(registered.map((c) => [c.id, (c.payload as { client_name?: unknown }).client_name]));
      return grants
        .map((g): ConnectedClient => {
          const payload = g.payload as GrantPayload;
          const clientId = payload.clientId ?? '';
          const name = names.get(clientId);
          return {
            grant_id: g.id,
            client_id: clientId,
            client_name: typeof name === 'string' ? name : null,
            identified_by: clientId.startsWith('https://') ? 'document' : 'registration',
            resources: Object.keys(payload.resources ?? {}),
            connected_at: new Date((payload.iat ?? 0) * 1000).toISOString(),
            expires_at: g.expiresAt?.toISOString() ?? null,
          };
        })
        .sort((a, b) => (a.connected_at < b.connected_at ? 1 : -1));
    },
    async disconnect(agentId, grantId) {
      if (grantId.length > 256 || grantId.includes('\u0000')) return false;
      const [grant] = await prisma.$transaction([
        prisma.oAuthRecord.deleteMany({ where: { kind: 'Grant', id: grantId, agentId } }),
        prisma.oAuthRecord.deleteMany({ where: { grantId, agentId } }),
      ]);
      return grant.count > 0;
    },
  };
}
