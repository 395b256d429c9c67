/**
 * The machine's processes as /proc shows them (Linux): what the test harness needs to find the
 * processes a test run started — by parent chain and by the marker variables in their environment
 * (test/support/children.ts). Elsewhere (no /proc) the lists are empty and the checks do nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** One process: its parent, its state letter (`Z` zombie), its command line and the test markers it carries. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
  command: string;
  /** The values of the environment variables asked for, when set. */
  markers: Record<string, string>;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    // The process ended while we looked, or it belongs to a user we may not read.
    return undefined;
  }
}

/** Every process but this one, with the values of `markerNames` from its environment. */
export function listProcesses(markerNames: readonly string[]): ProcessInfo[] {
  if (!existsSync('/proc/self/stat')) return [];
  const list: ProcessInfo[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const stat = read(`/proc/${pid}/stat`);
    if (stat === undefined) continue;
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after the last ')'.
    const [state = '', ppid = '0'] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const markers: Record<string, string> = {};
    for (const entry of (read(`/proc/${pid}/environ`) ?? '').split('\0')) {
      const eq = entry.indexOf('=');
      const key = entry.slice(0, eq);
      if (eq > 0 && markerNames.includes(key)) markers[key] = entry.slice(eq + 1);
    }
    const command = (read(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim();
    list.push({ pid, ppid: Number(ppid), state, command, markers });
  }
  return list;
}

/** The processes of `list` whose parent chain leads to `ancestor`. */
export function descendantsOf(ancestor: number, list: readonly ProcessInfo[]): ProcessInfo[] {
  const parent = new Map(list.map((p) => [p.pid, p.ppid]));
  return list.filter((p) => {
    for (let up = p.ppid, hops = 0; up > 1 && hops < 64; up = parent.get(up) ?? 0, hops++)
      if (up === ancestor) return true;
    return false;
  });
}

/** Whether `pid` is running (a zombie, which has ended and waits to be reaped, is not). */
export function isRunning(pid: number): boolean {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) {
    if (existsSync('/proc/self/stat')) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** SIGKILLs `pid` (its process group when `group`), ignoring a process that is already gone. */
export function killHard(pid: number, group = false): void {
  try {
    process.kill(group ? -pid : pid, 'SIGKILL');
  } catch {
    // Already gone, or (group) not a group leader: then the process alone.
    if (group) killHard(pid, false);
  }
}

/** One line naming a process, for reports. */
export function describeProcess(p: ProcessInfo): string {
  return `pid ${p.pid} (parent ${p.ppid}): ${p.command.slice(0, 200) || '?'}`;
}

/** The resident memory of process `pid` in bytes (VmRSS; it throws where there is no /proc). */
export function rssBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
}
