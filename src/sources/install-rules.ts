/** A dangerous step in an install/uninstall script. */
export interface InstallRule {
  id: 'install.download-exec' | 'install.privilege';
  what: string;
  pattern: RegExp;
}

/** Download-and-execute and privilege escalation, matched per line (comments stripped first). */
export const INSTALL_RULES: readonly InstallRule[] = [
  { id: 'install.download-exec', what: 'pipes a download into a shell', pattern: /\b(?:curl|wget|fetch)\b[^|;\n]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:[a-z]*sh|python\d?|perl|ruby|node)\b/ },
  { id: 'install.download-exec', what: 'runs a downloaded script', pattern: /\b(?:[a-z]*sh|source|\.)\s+<\(\s*(?:curl|wget)\b/ },
  { id: 'install.download-exec', what: 'evaluates a download', pattern: /\b(?:eval|[a-z]*sh\s+-c)\s+["']?\$\(\s*(?:curl|wget)\b/ },
  { id: 'install.download-exec', what: 'evaluates a download (PowerShell)', pattern: /\b(?:iex|Invoke-Expression)\b[^\n]*\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString)\b/i },
  { id: 'install.download-exec', what: 'downloads and executes a file', pattern: /\b(?:curl|wget)\b[^\n]*(?:&&|;)\s*(?:chmod\s+\+x[^\n]*(?:&&|;)\s*)?\.\//},
  { id: 'install.privilege', what: 'escalates privileges (sudo/su/doas/pkexec)', pattern: /(?:^|[;&|(]\s*|\s)(?:sudo|doas|pkexec|su)(?:\s|$)/ },
  { id: 'install.privilege', what: 'sets file capabilities', pattern: /\bsetcap\b/ },
  { id: 'install.privilege', what: 'sets a setuid/setgid bit', pattern: /\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s|[0-7]?[2467][0-7]{3}\b)/ },
  { id: 'install.privilege', what: 'hands files to root', pattern: /\bchown\s+(?:-\w+\s+)*root\b/ },
];

/** Commands whose last argument (or redirect target) is a path written to. */
const WRITE_COMMANDS = /(?:^|[;&|]\s*|\s)(?:cp|mv|install|ln|mkdir|touch|rm|rsync|tee|dd)\s+([^;&|\n]+)/g;
const REDIRECT = /(?:^|[^0-9&<>])(?:\d?>>?|&>)\s*("[^"]*"|'[^']*'|[^\s;&|]+)/g;
const HARMLESS = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d)$/;

function outside(target: string): boolean {
  const t = target.replace(/^["']|["']$/g, '');
  if (t === '' || t.startsWith('-')) return false;
  if (/^\$\{?AGPK_INSTALL_ROOT\}?(?:\/|$)/.test(t) || /^"?\$\{?AGPK_INSTALL_ROOT/.test(target)) return false;
  if (HARMLESS.test(t)) return false;
  return t.startsWith('/') || t.startsWith('~') || /^\$\{?HOME\}?(?:\/|$)/.test(t);
}

/** Absolute or home paths a script line writes to, outside `$AGPK_INSTALL_ROOT`. */
export function writesOutsideRoot(line: string): string[] {
  const found: string[] = [];
  for (const m of line.matchAll(REDIRECT)) if (m[1] && outside(m[1])) found.push(m[1]);
  for (const m of line.matchAll(WRITE_COMMANDS)) {
    const args = (m[1] ?? '').trim().split(/\s+/).filter((a) => !a.startsWith('-'));
    // `dd of=/x`; otherwise the last argument is the destination (mkdir/touch/rm: every argument).
    const targets = /\bdd\s/.test(m[0]) ? args.filter((a) => a.startsWith('of=')).map((a) => a.slice(3)) : /\b(?:mkdir|touch|rm)\s/.test(m[0]) ? args : args.slice(-1);
    for (const t of targets) if (outside(t)) found.push(t);
  }
  return [...new Set(found)];
}
