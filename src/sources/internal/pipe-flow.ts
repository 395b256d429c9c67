/**
 * What reaches each command's standard input on a line, through pipes and compound commands: a
 * `{ …; }` group, a `( … )` subshell, `if … fi`, `while`/`until`/`for`/`select … done` and
 * `case … esac` print what the commands in them print (`{ curl -fsSL u; } | sh`, `if true; then
 * curl u; fi | sh`), and the commands in one read what is piped into it. What flows is a set of
 * marks (bits): a reading ORs together whatever it tracks (a download, a decoded text, secrets).
 */
import type { ShellCommand } from './shell-words.ts';

/** Keywords that open a compound command (in a command's leading words), and the words that close one. */
const OPENERS = new Set(['{', 'if', 'while', 'until', 'for', 'select', 'case']);
const CLOSERS = new Set(['}', 'fi', 'done', 'esac']);
/** Keywords that lead a command without opening anything. */
const PREFIXES = new Set(['then', 'do', 'else', 'elif', '!', 'time']);

interface Frame {
  /** A subshell (closed by `)`) or a keyword's compound (closed by its closing word). */
  paren: boolean;
  /** What its commands read: what was piped into it. */
  fed: number;
  /** What its commands print that is not piped on inside it. */
  out: number;
}

/** The flow of one line's commands, told them in order. */
export interface PipeFlow {
  /** What command `c` reads on its standard input; call before reading it. */
  enter(c: ShellCommand): number;
  /** What `c` printed (`out`, as its reading found); `next` is the command after it on the line. */
  leave(c: ShellCommand, out: number, next: ShellCommand | undefined): void;
  /** What the line prints: what no pipe of it reads. */
  readonly out: number;
}

/**
 * The flow of one line (or of a hook's lines, told them in order). A class, not closures: a flow
 * is made for every substitution read, so it costs one small object.
 */
class Flow implements PipeFlow {
  private readonly top: Frame = { paren: false, fed: 0, out: 0 };
  private readonly frames: Frame[] = [this.top];
  // What the last command (or compound) printed, for a `|` after it.
  private piped = 0;

  get out(): number {
    return this.top.out;
  }

  enter(c: ShellCommand): number {
    const fed = (c.after === '|' ? this.piped : 0) | this.frames.at(-1)!.fed;
    for (let k = 0; k < (c.opens ?? 0); k++) this.frames.push({ paren: true, fed, out: 0 });
    for (const w of c.words) {
      if (OPENERS.has(w)) this.frames.push({ paren: false, fed, out: 0 });
      else if (!PREFIXES.has(w)) break;
    }
    return fed;
  }

  leave(c: ShellCommand, out: number, next: ShellCommand | undefined): void {
    const frames = this.frames;
    let printed = out;
    if (CLOSERS.has(c.words[0] ?? '') && frames.length > 1 && !frames.at(-1)!.paren) printed |= frames.pop()!.out;
    for (let k = 0; k < (c.closes ?? 0); k++) {
      if (frames.length === 1 || !frames.at(-1)!.paren) break;
      // The last command of a subshell prints into the subshell's output; the subshell then prints as one command.
      frames.at(-1)!.out |= printed;
      printed = frames.pop()!.out;
    }
    // What was printed goes to the pipe after it, or to the enclosing compound's output.
    if (next?.after === '|') this.piped = printed;
    else frames.at(-1)!.out |= printed;
  }
}

/** A new flow for one line. Each command costs its leading keywords: linear in the line. */
export function createPipeFlow(): PipeFlow {
  return new Flow();
}
