import { ValidationError } from '../kernel/index.ts';

// Query parameter names that carry credentials in practice (api_key, access_token, sig, auth…).
const SECRET_PARAM =
  /token|secret|passw|apikey|api[-_]key|credential|bearer|jwt|authorization|(^|[-_.])(key|sig|signature|pwd|auth|session)([-_.]|$)/i;

// Values that look like a credential wherever they appear in free text.
const SECRET_TEXT: [RegExp, string][] = [
  [/\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*/i, 'a bearer token'],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, 'a JWT'],
  [/\b(?:sk|rk|pk)[-_](?:live|test|proj|ant)?[-_]?[A-Za-z0-9_-]{16,}/, 'an API key'],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}/, 'a GitHub token'],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/, 'a Slack token'],
  [/\bAKIA[0-9A-Z]{16}\b/, 'an AWS access key'],
  [/\bAIza[0-9A-Za-z_-]{35}/, 'a Google API key'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a private key'],
  // Plaza's own: an account API key, an agent's gateway credential, a browser session.
  [/\b(?:plz|agt)_[0-9a-z]{8,}_[0-9a-z]{16,}/i, 'a Plaza credential'],
  [/\bsess_[0-9a-z]{20,}/i, 'a Plaza session token'],
  [
    /\b(?:api[-_ ]?key|access[-_ ]?token|secret|password|passwd|token)\s*[:=]\s*["']?[^\s"'<>]{8,}/i,
    'a credential assignment',
  ],
];

/**
 * Rejects listing fields that look like they carry a secret: a listing stores metadata and a URL,
 * never credentials (spec §1.2). The message says which field and why, never echoes the value.
 */
export function assertNoSecrets(url: URL, texts: Record<string, string | undefined>): void {
  if (url.username !== '' || url.password !== '') {
    throw new ValidationError(
      'Invalid listing: url: must not contain credentials (user:password@); listings never store secrets.',
      { param: 'url' },
    );
  }
  // Hosted servers often put a caller's key in the path (`/servers/<key>/mcp`): known formats are refused there too.
  const path = safeDecode(url.pathname);
  for (const [pattern, what] of SECRET_TEXT) {
    if (pattern.test(path))
      throw new ValidationError(
        `Invalid listing: url: its path contains what looks like ${what}; listings never store secrets.`,
        { param: 'url' },
      );
  }
  for (const name of url.searchParams.keys()) {
    if (SECRET_PARAM.test(name)) {
      throw new ValidationError(
        `Invalid listing: url: query parameter "${name.slice(0, 60)}" looks like a credential; listings never store secrets. Callers supply credentials per call.`,
        { param: 'url' },
      );
    }
  }
  for (const [field, value] of Object.entries(texts)) {
    if (value === undefined) continue;
    for (const [pattern, what] of SECRET_TEXT) {
      if (pattern.test(value)) {
        throw new ValidationError(
          `Invalid listing: ${field}: contains what looks like ${what}; listings never store secrets. Name the credential instead.`,
          {
            param: field,
          },
        );
      }
    }
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
