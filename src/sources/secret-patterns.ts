/** A pattern of a secret that must never ship inside a package. */
export interface SecretPattern {
  id: 'secret.private-key' | 'secret.token';
  what: string;
  pattern: RegExp;
}

/**
 * Private keys, cloud keys and tokens (well-known prefixes only, so ordinary text does not match).
 * Runs that can follow one another (`sk-sk-sk-…`) are bounded, so a file of them is scanned in
 * linear time (real OpenAI keys are far shorter than 200 characters a side).
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    id: 'secret.private-key',
    what: 'a private key',
    pattern: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----/,
  },
  { id: 'secret.private-key', what: 'a PuTTY private key', pattern: /PuTTY-User-Key-File-\d+:/ },
  { id: 'secret.token', what: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  {
    id: 'secret.token',
    what: 'a GitHub token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b/,
  },
  { id: 'secret.token', what: 'a GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/ },
  { id: 'secret.token', what: 'a Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/ },
  { id: 'secret.token', what: 'a Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { id: 'secret.token', what: 'a Stripe live key', pattern: /\b(?:sk|rk)_live_[0-9A-Za-z]{20,}\b/ },
  {
    id: 'secret.token',
    what: 'an OpenAI API key',
    pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,200}T3BlbkFJ[A-Za-z0-9_-]{20,200}\b/,
  },
  { id: 'secret.token', what: 'an npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { id: 'secret.token', what: 'a Plaza API key', pattern: /\bplz_[0-9a-z]{13}_[0-9a-z]{40}\b/ },
];
