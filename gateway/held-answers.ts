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
export const DEFAULT_HELD_ANSWER_LIMITS: HeldAnswerLimits = { perAgent: 32 * 1024 * 1024, total: 48 * 1024 * 1024 };

/** How long a client may take nothing of its answer, by default, before its connection is closed. */
export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;

/** The bytes one answer holds, from its first byte read upstream until its client took it (or left). */
export interface AnswerHold {
  /**
   * Sets what this answer holds while it is being read. Past a limit, answers being read that are
   * less far along (fewer bytes) are let go to make room, the least far along first, when that
   * makes enough; otherwise — or once this answer was itself let go for another — false: nothing
   * changes, and the answer must be let go (not delivered).
   */
  set(bytes: number): boolean;
  /**
   * The answer is read whole: it holds `bytes` (default: what it holds now) from now on, past the
   * limits if it must (its bytes were counted as they arrived), and is never let go for another.
   * False when it was let go already (for another answer, or released): it must not be delivered.
   */
  keep(bytes?: number): boolean;
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

/** One answer's share of the count. */
interface Entry {
  agentId: string;
  bytes: number;
  /** Released, or let go for another: it counts nothing and grows no more. */
  done: boolean;
}

/** Counts the bytes held by the answers in flight, per agent and in all; throws on bad limits. */
export function createHeldAnswers(limits: HeldAnswerLimits): HeldAnswers {
  if (!(Number.isSafeInteger(limits.perAgent) && limits.perAgent > 0))
    throw new TypeError('perAgent must be a whole number of bytes > 0');
  if (!(Number.isSafeInteger(limits.total) && limits.total > 0))
    throw new TypeError('total must be a whole number of bytes > 0');
  const byAgent = new Map<string, number>();
  let total = 0;
  /** Answers being read (holding bytes): the ones makeRoom may let go. */
  const reading = new Set<Entry>();

  const add = (agentId: string, delta: number) => {
    total += delta;
    const next = (byAgent.get(agentId) ?? 0) + delta;
    // Agents holding nothing are forgotten: the map is as large as the answers in flight.
    if (next === 0) byAgent.delete(agentId);
    else byAgent.set(agentId, next);
  };

  /**
   * Whether `entry` may grow by `delta`, letting go of answers being read that are less far along
   * when they make enough room (then they are let go: their next `set` fails and their reader
   * drops them, within its next read). A burst of large answers thus completes as many as fit
   * rather than each being cut once the sum of their beginnings fills the limit.
   */
  const makeRoom = (entry: Entry, delta: number): boolean => {
    let overAgent = (byAgent.get(entry.agentId) ?? 0) + delta - limits.perAgent;
    let overTotal = total + delta - limits.total;
    if (overAgent <= 0 && overTotal <= 0) return true;
    const behind = [...reading]
      .filter((e) => e !== entry && e.bytes > 0 && e.bytes < entry.bytes)
      .sort((a, b) => a.bytes - b.bytes);
    const chosen: Entry[] = [];
    for (const e of behind) {
      if (overAgent <= 0 && overTotal <= 0) break;
      const sameAgent = e.agentId === entry.agentId;
      // One of another agent frees nothing this agent is over.
      if (overTotal <= 0 && !sameAgent) continue;
      chosen.push(e);
      overTotal -= e.bytes;
      if (sameAgent) overAgent -= e.bytes;
    }
    if (overAgent > 0 || overTotal > 0) return false;
    for (const e of chosen) {
      e.done = true;
      reading.delete(e);
      add(e.agentId, -e.bytes);
      e.bytes = 0;
    }
    return true;
  };

  return {
    limits: { ...limits },
    refusal(agentId) {
      const mine = byAgent.get(agentId) ?? 0;
      if (mine >= limits.perAgent) {
        return `Plaza holds ${mine} bytes of this agent's answers that its connections have not read yet (at most ${limits.perAgent}): read those answers or close their connections, then call again`;
      }
      if (total >= limits.total)
        return `Plaza holds as many unread answers as it may (${limits.total} bytes for all agents); call again in a moment`;
      return undefined;
    },
    open(agentId) {
      const entry: Entry = { agentId, bytes: 0, done: false };
      const resize = (next: number) => {
        if (next !== entry.bytes) add(agentId, next - entry.bytes);
        entry.bytes = next;
      };
      return {
        set(next) {
          if (entry.done) return false;
          const delta = next - entry.bytes;
          if (delta > 0 && !makeRoom(entry, delta)) return false;
          reading.add(entry);
          resize(next);
          return true;
        },
        keep(next = entry.bytes) {
          if (entry.done) return false;
          reading.delete(entry);
          resize(next);
          return true;
        },
        release() {
          if (entry.done) return;
          entry.done = true;
          reading.delete(entry);
          resize(0);
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
