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
