/**
 * The bytes of answers the gateway holds in memory — read from an upstream, not yet taken by the
 * client's socket — per agent and in all, across `/mcp` and `/mcp/p/<provider>`. A client that
 * never reads would otherwise make Plaza keep every answer it asked for until the connection ends.
 */

/** Limits of createHeldAnswers. */
export interface HeldAnswerLimits {
  /** Most bytes held for one agent's answers at once. */
  perAgent: number;
  /** Most bytes held for all answers of this instance at once. */
  total: number;
}

/** The limits a gateway built without its own uses (config/schema.ts has the same defaults). */
export const DEFAULT_HELD_ANSWER_LIMITS: HeldAnswerLimits = { perAgent: 64 * 1024 * 1024, total: 128 * 1024 * 1024 };

/** How long a client may take nothing of its answer, by default, before its connection is closed. */
export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;

/** The bytes one answer holds, from its first byte read upstream until its client took it (or left). */
export interface AnswerHold {
  /**
   * Sets what this answer holds now. False when the figure would take its agent or the instance
   * past a limit: then nothing changes, and the answer must be let go (not delivered).
   */
  set(bytes: number): boolean;
  /** Lets go of the whole answer (idempotent). */
  release(): void;
}

/** The held-bytes accounting of one gateway instance. */
export interface HeldAnswers {
  readonly limits: HeldAnswerLimits;
  /**
   * Why a new request of `agentId` is refused before anything is asked upstream (words for the
   * caller), or undefined: the agent, or the instance, already holds its limit.
   */
  refusal(agentId: string): string | undefined;
  /** A hold for one answer of `agentId`, starting at 0 bytes. */
  open(agentId: string): AnswerHold;
  /** Bytes held now: in all, and for `agentId` when given. */
  held(agentId?: string): number;
}

/** Counts the bytes held by the answers in flight, per agent and in all; throws on bad limits. */
export function createHeldAnswers(limits: HeldAnswerLimits): HeldAnswers {
  if (!(Number.isSafeInteger(limits.perAgent) && limits.perAgent > 0)) throw new TypeError('perAgent must be a whole number of bytes > 0');
  if (!(Number.isSafeInteger(limits.total) && limits.total > 0)) throw new TypeError('total must be a whole number of bytes > 0');
  const byAgent = new Map<string, number>();
  let total = 0;

  const add = (agentId: string, delta: number) => {
    total += delta;
    const next = (byAgent.get(agentId) ?? 0) + delta;
    // Agents holding nothing are forgotten: the map is as large as the answers in flight.
    if (next === 0) byAgent.delete(agentId);
    else byAgent.set(agentId, next);
  };

  return {
    limits: { ...limits },
    refusal(agentId) {
      const mine = byAgent.get(agentId) ?? 0;
      if (mine >= limits.perAgent) {
        return `Plaza holds ${mine} bytes of this agent's answers that its connections have not read yet (at most ${limits.perAgent}): read those answers or close their connections, then call again`;
      }
      if (total >= limits.total) return `Plaza holds as many unread answers as it may (${limits.total} bytes for all agents); call again in a moment`;
      return undefined;
    },
    open(agentId) {
      let bytes = 0;
      let released = false;
      return {
        set(next) {
          if (released) return false;
          const delta = next - bytes;
          if (delta > 0 && ((byAgent.get(agentId) ?? 0) + delta > limits.perAgent || total + delta > limits.total)) return false;
          if (delta !== 0) add(agentId, delta);
          bytes = next;
          return true;
        },
        release() {
          if (released) return;
          released = true;
          if (bytes !== 0) add(agentId, -bytes);
          bytes = 0;
        },
      };
    },
    held(agentId) {
      return agentId === undefined ? total : (byAgent.get(agentId) ?? 0);
    },
  };
}

/** Why an answer was let go because it did not fit in what Plaza may hold (see AnswerHold.set). */
export function heldAnswerDropped(limits: HeldAnswerLimits): string {
  return `the answer was not delivered: it did not fit in the memory Plaza keeps for answers not yet read by their clients (${limits.perAgent} bytes per agent, ${limits.total} in all)`;
}

/** An answer let go because it did not fit in what Plaza may hold (its message: heldAnswerDropped). */
export class AnswerDroppedError extends Error {
  constructor(limits: HeldAnswerLimits) {
    super(heldAnswerDropped(limits));
    this.name = 'AnswerDroppedError';
  }
}
