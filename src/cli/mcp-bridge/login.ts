/**
 * `plaza agents login`: stores the agent credential `plaza mcp connect` bridges with, either an
 * agent token (checked with the gateway first, when it can be) or a browser sign-in for one
 * gateway endpoint.
 */
import { credentialFile, saveCredential } from '../credential-store.ts';
import { browserLogin } from '../oauth-login.ts';
import { fail } from './settings.ts';

/** The options of `plaza agents login`. */
export interface LoginOptions {
  token?: string;
  browser?: boolean;
  provider?: string;
  all?: boolean;
  open: boolean;
  url: string;
}

/** Answers in front of a gateway (a proxy's 403, a timeout, a rate limit) that neither confirm nor deny it. */
const UNDECIDED_STATUSES = new Set([403, 408, 429]);

/**
 * Why `plaza agents login` refuses a URL whose `/mcp` answered `status` (neither the gateway's 405
 * nor its 401), with the base URL to pass instead when the given one names a gateway endpoint.
 */
function notPlazaMessage(base: string, status: number): string {
  const url = new URL(base);
  const endpoint = /\/mcp(\/p\/[^/]*)?$/.exec(url.pathname);
  const hint = endpoint
    ? ` Pass the base URL, without the gateway path: --url ${url.origin}${url.pathname.slice(0, endpoint.index)}`
    : ' Pass the base URL of Plaza (the address its pages are served from).';
  return `${base}/mcp answered HTTP ${status}, not as Plaza's gateway does: ${base} is not a Plaza base URL. Nothing stored; the stored credential is unchanged.${hint}`;
}

/**
 * `plaza agents login --browser`: the browser sign-in for one gateway endpoint (`--provider` or
 * `--all`), stored with what renews it; the URL is printed on stderr (and opened unless --no-open).
 */
async function loginInBrowser(
  options: { token?: string; provider?: string; all?: boolean; open: boolean; url: string },
  env: Record<string, string | undefined>,
): Promise<void> {
  if (options.token) fail('pass either --token or --browser, not both.');
  if (!options.all === !options.provider)
    fail(
      'with --browser, name the endpoint to sign in for: --provider <provider> (for `plaza mcp connect <provider>`) or --all (for `plaza mcp connect --all`).',
    );
  if (options.provider && !/^[a-z0-9][a-z0-9-]{1,62}$/.test(options.provider))
    fail(`not a provider slug: ${options.provider}`);
  if (!URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol))
    fail(`not an http(s) URL: ${options.url}`);
  const base = options.url.replace(/\/+$/, '');
  const resource = options.all ? `${base}/mcp` : `${base}/mcp/p/${options.provider}`;
  let signedIn: Awaited<ReturnType<typeof browserLogin>>;
  try {
    signedIn = await browserLogin({
      resource,
      open: options.open,
      timeoutMs: 10 * 60_000,
      say: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    fail(`sign-in failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const file = credentialFile(env);
  saveCredential(file, { url: base, token: signedIn.token, oauth: signedIn.oauth });
  process.stdout.write(`${JSON.stringify({ stored: file, url: base, resource, verified: true })}\n`);
}

/** `plaza agents login`, with --token or --browser. */
export async function login(options: LoginOptions, env: Record<string, string | undefined>): Promise<void> {
  if (options.browser) return loginInBrowser(options, env);
  if (!options.token) fail('pass --token <agent token>, or --browser to sign in through the browser.');
  if (!/^agt_[0-9a-z]{13}_[0-9a-z]{40}$/.test(options.token)) {
    // An agent's id has the same prefix; its token is the longer secret shown once at creation.
    fail(
      /^agt_[0-9a-z]{20,32}$/.test(options.token)
        ? "that is an agent's id, not its token: pass the `token` that POST /api/agents answered (agt_<13 characters>_<40 characters>, shown once)."
        : 'that is not an agent token (agt_<13 characters>_<40 characters>, shown once when the agent is created).',
    );
  }
  if (!URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol))
    fail(`not an http(s) URL: ${options.url}`);
  const base = options.url.replace(/\/+$/, '');
  // The gateway checks the credential before anything else: GET /mcp answers 405 to an agent
  // it knows (the aggregate offers no stream) and 401 to any other. A token the gateway
  // refuses is not stored; one that cannot be checked now (Plaza not running) is, with a word.
  const checked = await fetch(`${base}/mcp`, {
    headers: { authorization: `Bearer ${options.token}`, accept: 'text/event-stream' },
    signal: AbortSignal.timeout(5_000),
  }).then(
    async (res) => {
      await res.body?.cancel().catch(() => undefined);
      return res.status;
    },
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  if (checked === 401) fail(`${base} refuses this agent token (revoked, or from another Plaza): nothing stored.`);
  // Any other answer below 500 came from a server that is up but is not Plaza's gateway at
  // this URL (most often a URL ending in /mcp, which the bridge appends itself): storing it
  // would replace a good credential with one every bridge request fails on.
  // A proxy's refusal or rate limit in front of a real Plaza (403, 408, 429) says nothing of the
  // URL: the token is stored unchecked, as when Plaza cannot be reached.
  if (typeof checked === 'number' && checked !== 405 && checked < 500 && !UNDECIDED_STATUSES.has(checked))
    fail(notPlazaMessage(base, checked));
  const verified = checked === 405;
  if (!verified)
    process.stderr.write(
      `plaza: could not check the token with ${base} (${typeof checked === 'number' ? `HTTP ${checked}` : checked}); stored unchecked\n`,
    );
  const file = credentialFile(env);
  saveCredential(file, { url: base, token: options.token });
  process.stdout.write(`${JSON.stringify({ stored: file, url: options.url, verified })}\n`);
}
