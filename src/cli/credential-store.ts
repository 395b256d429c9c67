import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What the bridge needs to renew an access token got by the browser sign-in. */
export interface StoredOAuth {
  /** The gateway endpoint the tokens are for (RFC 8707): `<base>/mcp` or `<base>/mcp/p/<provider>`. */
  resource: string;
  /** The authorization server (Plaza's issuer) the tokens came from. */
  issuer: string;
  clientId: string;
  refreshToken: string;
  /** When the access token stops working, in ms since the epoch. */
  expiresAt: number;
}

/**
 * What `plaza agents login` stores: where the gateway is and the agent's credential: an agent token,
 * or (`--browser`) an OAuth access token with what renews it.
 */
export interface StoredCredential {
  url: string;
  token: string;
  oauth?: StoredOAuth;
}

/** The credential file: `$XDG_CONFIG_HOME/plaza/agent-credentials.json` (else `~/.config/…`). */
export function credentialFile(env: Record<string, string | undefined>): string {
  if (env['PLAZA_CREDENTIALS_FILE']) return env['PLAZA_CREDENTIALS_FILE'];
  const base = env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config');
  return join(base, 'plaza', 'agent-credentials.json');
}

/**
 * Stores an agent credential with mode 0600 (written to a temp file, then renamed), so the AGIN
 * credential never has to sit in an MCP client's `env` block (spec §2.7).
 */
export function saveCredential(file: string, credential: StoredCredential): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(credential, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** Reads the stored credential, or undefined when there is none (or it is unreadable). */
export function loadCredential(file: string): StoredCredential | undefined {
  const read = readCredential(file);
  return 'credential' in read ? read.credential : undefined;
}

/**
 * Reads the stored credential, saying why there is none: no file (`missing`), or a file that
 * cannot be read or holds no credential (`problem`, in words, naming the file).
 */
export function readCredential(
  file: string,
): { credential: StoredCredential } | { missing: true } | { problem: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { missing: true };
    return {
      problem: `the credential file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
  let parsed: Partial<StoredCredential> | null;
  try {
    parsed = JSON.parse(text) as Partial<StoredCredential> | null;
  } catch {
    return { problem: `the credential file ${file} is not JSON` };
  }
  if (typeof parsed?.url !== 'string' || typeof parsed.token !== 'string')
    return { problem: `the credential file ${file} holds no url and token` };
  const oauth = parsed.oauth;
  if (oauth === undefined) return { credential: { url: parsed.url, token: parsed.token } };
  const valid =
    typeof oauth === 'object' &&
    oauth !== null &&
    ['resource', 'issuer', 'clientId', 'refreshToken'].every(
      (k) => typeof (oauth as unknown as Record<string, unknown>)[k] === 'string',
    ) &&
    typeof oauth.expiresAt === 'number';
  if (!valid) return { problem: `the credential file ${file} holds an unreadable sign-in (oauth)` };
  return {
    credential: {
      url: parsed.url,
      token: parsed.token,
      oauth: {
        resource: oauth.resource,
        issuer: oauth.issuer,
        clientId: oauth.clientId,
        refreshToken: oauth.refreshToken,
        expiresAt: oauth.expiresAt,
      },
    },
  };
}
