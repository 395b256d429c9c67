/**
 * The AGIN identity card of the agent making a call (spec §2.4): who is calling, as providers see
 * it. Plaza alone sets it; whatever a caller sends under these names is replaced.
 */
export interface AginCard {
  aginId: string;
  agentPrincipal: string;
  displayName: string;
  ownerContext: string;
}

/** An authenticated agent: its card plus what Plaza needs to scope receipts. */
export interface AgentIdentity extends AginCard {
  agentId: string;
  accountId: string | null;
}

/** Resolves an agent's gateway credential to its identity; throws the kernel's AuthError. */
export interface AgentAuthenticator {
  authenticate(token: string): Promise<AgentIdentity>;
}
