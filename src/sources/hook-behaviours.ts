/**
 * What a hook does besides installing, in the classes real package scanners look for (GuardDog's
 * rule classes, for instance): a reverse shell, persistence, reading credentials, sending them
 * out, and running code it decodes. Read from the hook's commands as `readHook` gives them
 * (parsed words, pipes and compound commands followed, substitutions, `eval` and `sh -c` code
 * read in turn), not from its text.
 */
import { posix } from 'node:path';

import { drain } from './download-exec.ts';
import { createPipeFlow, type PipeFlow } from './internal/pipe-flow.ts';
import { inlineCode, languageOf, REDIRECTION, stdinReader, withoutRedirections } from './internal/run-words.ts';
import { namesCredential, persistentCommand, persists, writtenPath, writtenWords } from './internal/sensitive-paths.ts';
import {
  asValue,
  byWord,
  commandWords,
  MAX_NESTING,
  parseCommands,
  type ShellCommand,
} from './internal/shell-words.ts';
import { uploads } from './internal/upload-words.ts';
import type { HookLine } from './read-hook.ts';

/** The rules of this reading. */
export type BehaviourId =
  | 'install.reverse-shell'
  | 'install.persistence'
  | 'install.credential-read'
  | 'install.exfiltration'
  | 'install.decode-exec';

/** One thing a hook line does. */
export interface Behaviour {
  /** 0-based index into the hook's lines. */
  line: number;
  id: BehaviourId;
  severity: 'high' | 'medium';
  what: string;
}

/** What flows out of a command (bits, see pipe-flow.ts): secrets, decoded text, other output, what a network peer sent, a shell's output. */
const SECRET = 1;
const DECODED = 2;
const OUTPUT = 4;
const NETWORK = 8;
const SHELL = 16;

/** Commands that print what they read (transformed): what flows into them flows on. */
const FILTERS =
  /^(?:cat|tac|tee|head|tail|base64|base32|basenc|xxd|od|hexdump|gzip|gunzip|zcat|bzip2|bunzip2|bzcat|xz|unxz|xzcat|zstd|unzstd|tr|sed|awk|gawk|cut|sort|uniq|rev|grep|egrep|fgrep|jq|openssl|gpg|fold|iconv|strings|dd|column|paste)$/;
/** Network clients that send what they read and print what the peer sends. */
const NET_TOOLS = /^(?:nc|ncat|netcat|nc\.traditional|nc\.openbsd|telnet|socat|cryptcat)$/;
/** A raw socket the shell opens as a file. */
const RAW_SOCKET = /^\/dev\/(?:tcp|udp)\//;
/** Commands that name a credential without reading it (create, secure, test, list or print its name). */
const NOT_READING = /^(?:test|\[\[?|chmod|chown|chgrp|mkdir|touch|rm|ssh-keygen|ls|stat|echo|printf)$/;
/** Escapes `printf` (and `echo -e`) decode: `\x63`, `\143`, `\u0063`. */
const ESCAPES = /\\(?:x[0-9A-Fa-f]|[0-7]|u[0-9A-Fa-f])/;
/**
 * Program code that evaluates what it decodes: python `exec(base64.b64decode(…))` (also through
 * zlib, codecs, `compile`), node `eval(atob(…))`/`eval(Buffer.from(s, 'base64')…)`/`new
 * Function(atob(…))`, perl `eval(decode_base64(…))`, ruby `eval(Base64.decode64(…))`, php
 * `eval(base64_decode(…))`/`gzinflate`. Bounded runs: linear in a line.
 */
const PROGRAM_DECODE_EXEC =
  /\b(?:exec|eval|Function)\s*\(\s*(?:compile\s*\(\s*)?(?:[\w.]{0,64}\.)?(?:b64decode|b32decode|b85decode|a85decode|decodebytes|decompress|unhexlify|fromhex|atob|decode_base64|decode64|unpack1?|base64_decode|gzinflate|gzuncompress|gzdecode|str_rot13|hex2bin)\s*\(|\b(?:eval|Function)\s*\(\s*Buffer\.from\([^)]{0,256}['"](?:base64|hex)['"]/;
/** A program that opens a network connection, and one that hands a shell its descriptors or spawns one. */
const PROGRAM_SOCKET =
  /\bsocket\.socket\b|\bsocket\s*\(|\bfsockopen\b|\bTCPSocket\b|\bIO::Socket\b|\bnet\.(?:connect|createConnection|Socket)\b/;
const PROGRAM_SHELL =
  /\bdup2\b|\bpty\.spawn\b|['"]\/bin\/(?:ba|z|da)?sh\b|\bspawn\(\s*['"](?:ba|z)?sh['"]|['"]cmd\.exe['"]/;
/** A credential named in program text (`open(os.path.expanduser('~/.ssh/id_rsa'))`). */
const PROGRAM_CREDENTIAL =
  /\.ssh\/id_\w|\.aws\/credentials\b|\.git-credentials\b|\/etc\/g?shadow\b|\/proc\/self\/environ\b|~\/\.(?:npmrc|netrc|pypirc)\b/;
/** Commands that print the environment (`env`, `printenv`, `set`, `export -p`, `declare -px`, `compgen -v`). */
function dumpsEnvironment(name: string, args: readonly string[]): boolean {
  if (name === 'env' || name === 'printenv') return args.every((a) => a.startsWith('-') || a.includes('='));
  if (name === 'set' || name === 'export') return args.length === 0 || args.includes('-p');
  if (name === 'declare' || name === 'typeset')
    return args.some((a) => /^-[a-zA-Z]*[px]/.test(a)) && args.every((a) => a.startsWith('-'));
  return name === 'compgen' && args.includes('-v');
}

/** Whether a command decodes text it is given (`base64 -d`, `xxd -r`, `openssl … -d`, `uudecode`, `rev`, `printf '\x63…'`). */
function decodes(name: string, args: readonly string[]): boolean {
  if (/^(?:base64|base32|basenc)$/.test(name)) return args.some((a) => /^(?:-[a-zA-Z]*[dD]|--decode)$/.test(a));
  if (name === 'xxd') return args.some((a) => /^-[a-zA-Z]*r/.test(a));
  if (name === 'openssl') return args.includes('-d');
  if (name === 'uudecode' || name === 'rev') return true;
  if (name === 'printf') return ESCAPES.test(args[0] ?? '');
  return name === 'echo' && args.some((a) => /^-[a-zA-Z]*e/.test(a)) && args.some((a) => ESCAPES.test(a));
}

/** Whether a command connects standard input and output of a shell to a network peer (`nc -e /bin/sh`, `socat exec:sh tcp:h:p`). */
function servesShell(name: string, args: readonly string[]): boolean {
  // telnet's `-e` is its escape character, not a program.
  if (/^(?:nc|ncat|netcat|nc\.traditional|nc\.openbsd|cryptcat)$/.test(name))
    return args.some((a) => /^-[a-zA-Z]*[ec][a-zA-Z]*$|^--(?:sh-|lua-)?exec\b/.test(a));
  return (
    name === 'socat' &&
    args.some((a) => /^(?:exec|system):/i.test(a)) &&
    args.some((a) => /^(?:tcp|tcp4|tcp6|udp|openssl|ssl)[-:]/i.test(a))
  );
}

/** The severity of each rule; exfiltration's depends on what is sent. */
const SEVERITY: Record<BehaviourId, 'high' | 'medium'> = {
  'install.reverse-shell': 'high',
  'install.decode-exec': 'high',
  'install.persistence': 'medium',
  'install.credential-read': 'medium',
  'install.exfiltration': 'medium',
};

/** What re-reading `eval` and `sh -c` code may cost all together, at least (a larger hook may re-read its own size). */
const MIN_REREAD_BUDGET = 64 * 1024;

/**
 * The behaviours of a hook's lines (as `readHook` reads them), at most one of each rule and
 * severity per line. A here-document's body that nothing runs is not read.
 */
export function hookBehaviours(lines: readonly HookLine[]): Behaviour[] {
  return drain(readBehaviours(lines, parseCommands));
}

/** {@link hookBehaviours} one hook line per step, as `readDownloadRuns` reads (same steps, same `parse`). */
export function* readBehaviours(
  lines: readonly HookLine[],
  parse: (text: string) => ShellCommand[],
): Generator<void, Behaviour[], void> {
  const found: Behaviour[] = [];
  // Names holding what a substitution printed (`s=$(echo … | base64 -d)`), with its marks.
  const marked = new Map<string, number>();
  let rereadLeft = Math.max(
    MIN_REREAD_BUDGET,
    lines.reduce((n, l) => n + l.text.length + 1, 0),
  );
  let line = 0;
  // The rules (and severities) reported on the current line; made at its first finding (most lines have none).
  let onLine: Set<string> | undefined;
  const report = (id: BehaviourId, what: string, severity = SEVERITY[id]): void => {
    if (onLine?.has(id + severity)) return;
    (onLine ??= new Set()).add(id + severity);
    found.push({ line, id, severity, what });
  };
  /** The marks of the names `word` refers to. */
  const refers = (word: string): number => {
    if (marked.size === 0 || !word.includes('$')) return 0;
    let marks = 0;
    for (const m of word.matchAll(/\$\{?([A-Za-z_]\w*)/g)) marks |= marked.get(m[1]!) ?? 0;
    return marks;
  };

  /** Program text (a python/node/perl/ruby/php hook or body, or `-c`/`-e` code); `unit` keeps one program's marks over its lines. */
  function program(text: string, unit: { socket: boolean; shell: boolean }): void {
    if (PROGRAM_DECODE_EXEC.test(text)) report('install.decode-exec', 'evaluates code it decodes at run time');
    unit.socket ||= PROGRAM_SOCKET.test(text);
    unit.shell ||= PROGRAM_SHELL.test(text);
    if (unit.socket && unit.shell)
      report(
        'install.reverse-shell',
        'connects a shell to a network socket (a socket and a spawned shell or dup2 in one program)',
      );
    const credential = PROGRAM_CREDENTIAL.exec(text);
    if (credential) report('install.credential-read', `reads credentials (${credential[0]})`);
  }

  /** One line of shell code, `depth` deep in substitutions and handed code; answers what it prints. */
  function shell(text: string, depth: number, hookFlow?: PipeFlow): number {
    const commands = parse(text);
    if (commands.length === 0) return 0;
    const flow = hookFlow ?? createPipeFlow();
    const before = flow.out;
    for (const [k, c] of commands.entries()) flow.leave(c, command(c, flow.enter(c), depth), commands[k + 1]);
    return flow.out & ~before;
  }

  /** Re-reads code handed to a shell (`eval`, `sh -c`), within the hook's budget. */
  function handed(code: string, depth: number): void {
    if (depth < MAX_NESTING && (rereadLeft -= code.length) >= 0) shell(code, depth + 1);
  }

  /** One command, fed `fed` on its standard input; answers what it prints. */
  function command(c: ShellCommand, fed: number, depth: number): number {
    const all = c.words;
    let subs: Map<number, number> | undefined;
    for (const s of depth < MAX_NESTING ? c.substitutions : []) {
      if (!/\S/.test(s.code)) continue;
      const marks = shell(s.code, depth + 1);
      if (marks !== 0) (subs ??= new Map()).set(s.word, (subs.get(s.word) ?? 0) | marks);
    }
    const marksOf = (j: number): number => (subs?.get(j) ?? 0) | refers(all[j] ?? '');
    const words = commandWords(all);
    const offset = all.length - words.length;
    // `s=$(…)`: the name holds what the substitution printed until it is assigned something else.
    for (let j = 0; j < offset; j++) {
      const name = /^([A-Za-z_]\w*)\+?=/.exec(all[j]!)?.[1];
      if (name === undefined) continue;
      const marks = marksOf(j);
      if (marks === 0) marked.delete(name);
      else marked.set(name, marks);
    }
    // Assignments alone (`x=$(…)`) run nothing more.
    if (words.length === 0) return 0;
    const plain = withoutRedirections(words);
    const name = posix.basename(words[0] ?? '');
    const args = plain.slice(1);
    // What its arguments carry (`echo "$s"`, `curl "u?d=$(env)"`).
    let carried = 0;
    for (let j = offset + 1; j < all.length; j++) carried |= marksOf(j);
    let out = FILTERS.test(name) ? fed : 0;
    if (name === 'echo' || name === 'printf') out |= carried === 0 ? 0 : OUTPUT | (carried & (SECRET | DECODED));
    else if (name !== 'true' && name !== ':') out |= OUTPUT;

    // Files it writes, and credentials it reads (any other word naming one).
    const written = writtenWords(all, offset);
    // Looked up once per word: a set (a line of thousands of redirections would make a list quadratic).
    const writes = written.length === 0 ? undefined : new Set(written);
    for (const j of written) {
      const path = writtenPath(all[j]!);
      if (persists(path))
        report('install.persistence', `writes ${path.slice(0, 80)}, which runs again at login, boot or on a schedule`);
    }
    const persistent = persistentCommand(name, args);
    if (persistent) report('install.persistence', persistent);
    const credentials = NOT_READING.test(name)
      ? []
      : all.filter((w, j) => j >= offset && !writes?.has(j) && !REDIRECTION.test(w) && namesCredential(w));
    if (credentials.length > 0) {
      report('install.credential-read', `reads credentials (${credentials[0]!.slice(0, 80)})`);
      out |= SECRET;
    }
    if (dumpsEnvironment(name, args)) out |= SECRET;
    if (decodes(name, args)) out |= DECODED;

    // Reverse shells: a shell on a raw socket, a network client serving a shell, a shell's output sent to a peer or its input read from one.
    const language = languageOf(name);
    const socket = all.findIndex((w, j) => j > 0 && RAW_SOCKET.test(w) && REDIRECTION.test(all[j - 1]!));
    // A shell, or `exec`/bare redirections: the hook's own shell takes the socket as its descriptors.
    const exec = all.indexOf('exec');
    const shellish = language !== undefined || (exec >= 0 && exec <= offset) || REDIRECTION.test(words[0]!);
    if (socket > 0 && shellish)
      report('install.reverse-shell', `connects a shell to a network socket (${all[socket]!.slice(0, 60)})`);
    else if (socket > 0 && /</.test(all[socket - 1]!)) out |= NETWORK;
    if (servesShell(name, args))
      report('install.reverse-shell', `hands a shell to a network peer (${name} ${args.join(' ').slice(0, 60)})`);
    // Only an interpreter (or `source`/`.`) reads a program from its standard input.
    const reader = language !== undefined || name === 'source' || name === '.' ? stdinReader(plain) : undefined;
    if (reader !== undefined && fed & NETWORK)
      report('install.reverse-shell', `runs what a network peer sends (${name})`);
    if (reader === 'shell') out |= SHELL;
    if (NET_TOOLS.test(name) || (name === 'openssl' && args[0] === 's_client')) {
      if (fed & SHELL) report('install.reverse-shell', `hands a shell's output to a network peer (${name})`);
      out |= NETWORK;
    }

    // Exfiltration: what it sends, by a network client, an upload option or a raw socket.
    const sent = uploads(name, args);
    const network = sent !== undefined || NET_TOOLS.test(name) || (socket > 0 && !shellish);
    if (network) {
      const stdin = sent === undefined || sent.stdin ? fed : 0;
      const files = [
        ...(sent?.files ?? []),
        ...all.filter((w, j) => j > 0 && /^0?<$/.test(all[j - 1]!) && !RAW_SOCKET.test(w)),
      ];
      const sends = carried | stdin | (socket > 0 && /^\d?>/.test(all[socket - 1]!) ? out : 0);
      const secretFile = files.find((f) => namesCredential(f));
      if (sends & SECRET || secretFile !== undefined)
        report(
          'install.exfiltration',
          `sends the environment or credentials out${secretFile ? ` (${secretFile.slice(0, 60)})` : ''}`,
          'high',
        );
      else if (files.length > 0) report('install.exfiltration', `sends a local file out (${files[0]!.slice(0, 60)})`);
      else if (stdin & (OUTPUT | DECODED))
        report('install.exfiltration', `sends what another command prints out (${name})`);
    }

    // Decode-then-run: decoded text as a command, as a shell's or interpreter's code, fed to its standard input.
    if (words.length > 0 && marksOf(offset) & DECODED) report('install.decode-exec', 'runs a command it decodes');
    if (reader !== undefined && fed & DECODED) report('install.decode-exec', `feeds ${name} code it decodes`);
    if (reader !== undefined && words.some((w, j) => w === '<<<' && marksOf(offset + j + 1) & DECODED))
      report('install.decode-exec', `feeds ${name} code it decodes`);
    if (
      (language !== undefined || name === 'source' || name === '.') &&
      c.substitutions.some((s) => s.kind === '<(' && s.word > offset && (subs?.get(s.word) ?? 0) & DECODED)
    ) {
      report('install.decode-exec', `runs a script it decodes (${name} <(…))`);
    }
    // Handed code is read as the shell gets it: the substitutions in it have run already (their output stands as a placeholder).
    const inline = language === undefined ? undefined : inlineCode(words);
    if (inline && marksOf(offset + inline.at) & DECODED) report('install.decode-exec', `hands ${name} code it decodes`);
    else if (inline?.language === 'shell')
      handed(asValue(inline.code, byWord(c.substitutions).get(offset + inline.at)), depth);
    else if (inline) program(inline.code, { socket: false, shell: false });
    if (name === 'eval' && words.length > 1) {
      const bySub = byWord(c.substitutions);
      if (words.some((_, j) => j > 0 && marksOf(offset + j) & DECODED))
        report('install.decode-exec', 'evaluates code it decodes');
      else
        handed(
          words
            .slice(1)
            .map((w, j) => asValue(w, bySub.get(offset + 1 + j)))
            .join(' '),
          depth,
        );
    }
    // `… | while read l; do eval "$l"; done`: the names `read` sets hold what it was fed.
    if (name === 'read' && fed !== 0)
      for (const n of args
        .filter((a) => /^[A-Za-z_]\w*$/.test(a))
        .concat(args.some((a) => /^[A-Za-z_]/.test(a)) ? [] : ['REPLY']))
        marked.set(n, fed);
    return out;
  }

  // The hook's own lines share one flow (a compound spread over lines), and a program's marks last over its lines.
  const flow = createPipeFlow();
  let unit = { id: 0, socket: false, shell: false };
  for (const [i, hookLine] of lines.entries()) {
    yield;
    if (hookLine.data || !hookLine.text.trim()) continue;
    line = i;
    onLine = undefined;
    if (hookLine.program) {
      if (hookLine.program.unit !== unit.id) unit = { id: hookLine.program.unit, socket: false, shell: false };
      program(hookLine.text, unit);
      continue;
    }
    shell(hookLine.evaluated ?? hookLine.text, 0, flow);
  }
  return found;
}
