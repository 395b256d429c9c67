/** One parse of a hook line shared by the readings that go through it together. */
import { parseCommands, type ShellCommand } from './shell-words.ts';

/** A `parseCommands` that answers a text it was given since the last `clear` from memory. */
export interface CommandCache {
  parse(text: string): ShellCommand[];
  /** Forgets what was parsed (call per hook line: what a line's readings parse is that line's). */
  clear(): void;
}

/**
 * A {@link CommandCache}, for two readings of the same line (the download reading and the
 * behaviour reading parse the same line, substitutions and handed code): the commands are shared,
 * so neither may change them.
 */
export function createCommandCache(): CommandCache {
  const parsed = new Map<string, ShellCommand[]>();
  return {
    parse(text) {
      let commands = parsed.get(text);
      if (commands === undefined) parsed.set(text, (commands = parseCommands(text)));
      return commands;
    },
    clear: () => parsed.clear(),
  };
}
