/** A dangerous step in an install/uninstall script. */
export interface InstallRule {
  id: 'install.download-exec' | 'install.privilege';
  what: string;
  pattern: RegExp;
}

/**
 * Download-and-execute and privilege escalation, matched per line (comments stripped first).
 *
 * Each pattern is linear in the line: a rule of the shape `A[^\n]*B` retried from every `A` of a
 * long line (`curl curl curl …`) is quadratic, so such rules start once — at the line's start or a
 * separator — and pass over text with `(?=(X))\1`, which matches what `X` matched and is never
 * backtracked into (JavaScript has no atomic groups).
 */
export const INSTALL_RULES: readonly InstallRule[] = [
  {
    id: 'install.download-exec',
    what: 'pipes a download into a shell',
    pattern:
      /(?:^|[|;])(?=[^|;\n]*?\b(?:curl|wget|fetch)\b)(?=([^|;\n]*))\1\|\s*(?:sudo\s+)?(?:env\s+)?(?:[a-z]*sh|python\d?|perl|ruby|node)\b/,
  },
  {
    id: 'install.download-exec',
    what: 'runs a downloaded script',
    pattern: /\b(?:[a-z]*sh|source|\.)\s+<\(\s*(?:curl|wget)\b/,
  },
  {
    id: 'install.download-exec',
    what: 'feeds a download to an interpreter as a here-string',
    pattern:
      /(?<=\b(?:[a-z]*sh|python[\d.]*|node|perl|ruby|php)(?:\s+-[\w-]{1,32})*\s*)<<<\s*["']?\$\(\s*(?:curl|wget|fetch)\b/,
  },
  {
    id: 'install.download-exec',
    what: 'evaluates a download',
    pattern: /\b(?:eval|[a-z]*sh\s+-c)\s+["']?\$\(\s*(?:curl|wget)\b/,
  },
  {
    id: 'install.download-exec',
    what: 'evaluates a download (PowerShell)',
    pattern:
      /^(?=([^\n]*?\b(?:iex|Invoke-Expression)\b))\1[^\n]*?\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString)\b/i,
  },
  {
    id: 'install.download-exec',
    what: 'downloads and executes a file',
    pattern: /^(?=([^\n]*?\b(?:curl|wget)\b))\1[^\n]*?(?:&&|;)\s*\.\//,
  },
  {
    id: 'install.privilege',
    what: 'escalates privileges (sudo/su/doas/pkexec)',
    pattern: /(?:^|[;&|(]\s*|\s)(?:sudo|doas|pkexec|su)(?:\s|$)/,
  },
  { id: 'install.privilege', what: 'sets file capabilities', pattern: /\bsetcap\b/ },
  {
    id: 'install.privilege',
    what: 'sets a setuid/setgid bit',
    pattern: /\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s|[0-7]?[2467][0-7]{3}\b)/,
  },
  { id: 'install.privilege', what: 'hands files to root', pattern: /\bchown\s+(?:-\w+\s+)*root\b/ },
];

/**
 * A download expanded into the body of an unquoted here-document fed to an interpreter
 * (`bash <<EOF` … `$(curl …)` … `EOF`): the shell runs it before the interpreter reads the code.
 */
export const EXPANDED_DOWNLOAD = /\$\(\s*(?:curl|wget|fetch)\b|`\s*(?:curl|wget|fetch)\b/;
