import { rmSync } from 'node:fs';

import { breakStaleLock, createLockFile, pidLockStale } from '../kernel/index.ts';
import { readCredential, saveCredential, type StoredCredential } from './credential-store.ts';
import { refreshOAuth } from './oauth-login.ts';

/** How long before its expiry an access token is renewed anyway. */
const EARLY_MS = 30_000;

/**
 * The access token of a browser sign-in, kept fresh: renewed before it expires and when the
 * gateway refuses it (401), with the rotated refresh token written back to the credential file.
 * Bridges sharing one file renew under a lock file and first adopt what another one already
 * renewed: a refresh token used twice would make Plaza revoke the whole grant.
 */
export interface TokenRenewal {
  /** The access token to send now (renewed first when it is about to expire). */
  current(): Promise<string>;
  /** Renews after the gateway refused `refused`; resolves to the token to retry with. */
  renew(refused: string): Promise<string>;
}

/** Creates the renewal for the credential stored in `file`. */
export function createTokenRenewal(
  file: string,
  stored: StoredCredential & { oauth: NonNullable<StoredCredential['oauth']> },
): TokenRenewal {
  let credential = stored;
  let running: Promise<string> | undefined;

  async function renewLocked(refused: string | undefined): Promise<string> {
    const lock = `${file}.lock`;
    for (let attempt = 0; !createLockFile(lock, String(process.pid)); attempt++) {
      if (attempt > 100) throw new Error(`the credential file is locked (${lock}); remove it if no plaza process runs`);
      breakStaleLock(lock, pidLockStale(30_000));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    try {
      // Another bridge may have renewed meanwhile: its token is taken, not renewed again.
      const read = readCredential(file);
      if (
        'credential' in read &&
        read.credential.oauth?.resource === credential.oauth.resource &&
        read.credential.token !== refused &&
        read.credential.oauth.expiresAt - EARLY_MS > Date.now()
      ) {
        credential = read.credential as typeof credential;
        return credential.token;
      }
      const renewed = await refreshOAuth(credential.oauth);
      credential = { ...credential, token: renewed.token, oauth: renewed.oauth };
      saveCredential(file, credential);
      return credential.token;
    } finally {
      rmSync(lock, { force: true });
    }
  }

  const renew = (refused: string | undefined) => {
    running ??= renewLocked(refused).finally(() => (running = undefined));
    return running;
  };
  return {
    current: async () => (credential.oauth.expiresAt - EARLY_MS > Date.now() ? credential.token : renew(undefined)),
    renew: (refused) => (credential.token !== refused ? Promise.resolve(credential.token) : renew(refused)),
  };
}

/**
 * A fetch that sends the renewal's current token as `Authorization`, and on a 401 renews it and
 * sends the request once more (the body of the gateway's requests is a string, sent again as is).
 */
export function renewingFetch(renewal: TokenRenewal, inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const send = (token: string) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${token}`);
      return inner(input, { ...init, headers });
    };
    const token = await renewal.current();
    const res = await send(token);
    if (res.status !== 401) return res;
    let renewed: string;
    try {
      renewed = await renewal.renew(token);
    } catch (error) {
      process.stderr.write(
        `plaza: the sign-in could not be renewed (${error instanceof Error ? error.message : String(error)}): run \`plaza agents login --browser\` again\n`,
      );
      return res;
    }
    await res.body?.cancel().catch(() => undefined);
    return send(renewed);
  };
}
