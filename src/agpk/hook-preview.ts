/**
 * What the approval summary says of a lifecycle hook an operation will run (spec §3.4): which
 * hook, its file, and its first commands, so that the human approves knowing what runs.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';

import { terminalText } from '../kernel/index.ts';
import { hookFile, type HookName } from './hooks.ts';
import type { Lifecycle } from './manifest.ts';

/** A hook the operation runs, as the human sees it before approving. */
export interface HookPreview {
  hook: HookName;
  /** The file that runs, relative to the package root. */
  file: string;
  /** Its first command lines (comments, blank lines and `set` options left out), each cut short. */
  commands: string[];
  /** Command lines after those shown (counted in the first READ_BYTES of the file). */
  more: number;
  /** The file is longer than what was read, so there may be more lines still. */
  truncated: boolean;
}

const SHOWN_LINES = 3;
const LINE_CHARS = 120;
const READ_BYTES = 64 * 1024;

/** A hook line shown on a terminal: control characters escaped, a long line cut short. */
const printable = (line: string): string => terminalText(line, LINE_CHARS);

/** Whether a hook line does something: not blank, not a comment or `#!`, not `set -eu`. */
function isCommand(line: string): boolean {
  const t = line.trim();
  return t !== '' && !t.startsWith('#') && !/^set\s+[-+][A-Za-z]+(\s+[-+][A-Za-z]+)*$/.test(t);
}

/** The first READ_BYTES of a file, and whether there is more; undefined when it cannot be read. */
async function readStart(path: string): Promise<{ text: string; truncated: boolean } | undefined> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const size = (await handle.stat()).size;
    const buffer = Buffer.alloc(Math.min(size, READ_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { text: buffer.subarray(0, bytesRead).toString('utf8'), truncated: size > READ_BYTES };
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * The hook `name` of the package at `root` as {@link runHook} would find it (lifecycle, else the
 * default file; an upgrade falls back to the install hook), or undefined when none would run.
 */
export async function previewHook(
  root: string,
  lifecycle: Lifecycle | undefined,
  name: HookName,
): Promise<HookPreview | undefined> {
  const file = await hookFile(root, lifecycle, name);
  if (file === undefined) return undefined;
  const read = await readStart(join(root, file));
  // Unreadable here, it will fail to run too; it is still named, as a hook that runs.
  if (read === undefined) return { hook: name, file, commands: [], more: 0, truncated: true };
  const { text, truncated } = read;
  const lines = text.split(/\r?\n/);
  // A line cut at READ_BYTES is not shown as if it were whole.
  if (truncated) lines.pop();
  const commands = lines.filter(isCommand);
  return {
    hook: name,
    file,
    commands: commands.slice(0, SHOWN_LINES).map((l) => printable(l.trim())),
    more: Math.max(0, commands.length - SHOWN_LINES),
    truncated,
  };
}
