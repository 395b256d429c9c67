/**
 * What `plaza mcp connect` bridges to, read from its arguments, the credential store and the
 * environment: the gateway endpoint, the headers every request carries (the agent credential, or
 * a browser sign-in's renewal; the third-party credential and the one provider it is for), and
 * the bridge's timing settings. Anything inconsistent ends the command before it serves.
 */
import { credentialFile, readCredential } from '../credential-store.ts';
import { createTokenRenewal, type TokenRenewal } from '../oauth-renewal.ts';
import { fail, intSetting } from './settings.ts';

/** The options of `plaza mcp connect`. */
export interface ConnectOptions {
  all?: boolean;
  upstreamTokenEnv?: string;
  upstreamProvider?: string;
  url?: string;
}

/** Where and how the bridge talks to the gateway. */
export interface BridgeTarget {
  /** Plaza's base URL, without a trailing slash. */
  base: string;
  /** The gateway endpoint: /mcp/p/<provider>, or /mcp with --all. */
  target: URL;
  /** What renews a browser sign-in's token, when the stored credential is one. */
  renewal: TokenRenewal | undefined;
  headers: Record<string, string>;
  /** How long answers to requests sent before the client closed stdin are waited for. */
  drainMs: number;
  /** How soon a notification stream that broke off is first reopened. */
  reconnectMs: number;
  /** The largest event of the notification stream. */
  maxEventBytes: number;
}

/** Reads the bridge's target, or ends the command saying what is wrong. */
export function bridgeTarget(
  provider: string | undefined,
  options: ConnectOptions,
  env: Record<string, string | undefined>,
): BridgeTarget {
  const file = credentialFile(env);
  const read = readCredential(file);
  // Named with the file looked at: MCP clients start the bridge with few environment variables,
  // so a login made with PLAZA_CREDENTIALS_FILE or XDG_CONFIG_HOME set is not found without them.
  if ('missing' in read) {
    fail(
      `no agent credential in ${file}: run \`plaza agents login --token <agent token>\` first. (If you logged in with PLAZA_CREDENTIALS_FILE or XDG_CONFIG_HOME set, set the same in this server's "env" in your MCP client's config: clients start it with few environment variables.)`,
    );
  }
  if ('problem' in read)
    fail(`${read.problem}: run \`plaza agents login --token <agent token>\` to store the credential again.`);
  const stored = read.credential;
  if (!options.all && !provider) fail('name a provider (plaza mcp connect <provider>) or pass --all.');
  if (provider && !/^[a-z0-9][a-z0-9-]{1,62}$/.test(provider)) fail(`not a provider slug: ${provider}`);
  const base = (options.url ?? stored.url).replace(/\/+$/, '');
  const target = new URL(options.all ? `${base}/mcp` : `${base}/mcp/p/${provider}`);
  // A browser sign-in's token is bound to the endpoint it was issued for, and renewed as it expires.
  if (stored.oauth && stored.oauth.resource !== target.href) {
    fail(
      `the stored sign-in is for ${stored.oauth.resource}, not ${target.href}: run \`plaza agents login --browser ${options.all ? '--all' : `--provider ${provider}`}\` (or bridge to that endpoint).`,
    );
  }
  const renewal = stored.oauth ? createTokenRenewal(file, { ...stored, oauth: stored.oauth }) : undefined;
  const headers: Record<string, string> = renewal ? {} : { authorization: `Bearer ${stored.token}` };
  if (options.upstreamTokenEnv) {
    const value = env[options.upstreamTokenEnv];
    if (!value) fail(`environment variable ${options.upstreamTokenEnv} is empty`);
    headers['x-platform-upstream-authorization'] = /^[A-Za-z]+ /.test(value) ? value : `Bearer ${value}`;
    // On /mcp the credential goes to the one provider it is for, never to every provider listed.
    const scope = options.upstreamProvider ?? provider;
    if (options.all && !scope)
      fail(
        'with --all, name the provider the credential is for: --upstream-provider <provider> (it goes to that provider only).',
      );
    if (scope && !/^[a-z0-9][a-z0-9-]{1,62}$/.test(scope)) fail(`not a provider slug: ${scope}`);
    if (!options.all && scope !== provider)
      fail(`--upstream-provider ${scope} differs from the provider bridged to (${provider}).`);
    headers['x-platform-upstream-provider'] = scope!;
  } else if (options.upstreamProvider) {
    fail('--upstream-provider names whose credential --upstream-token-env holds; pass both.');
  }
  // How long answers to requests sent before the client closed stdin are waited for; how soon a
  // notification stream that broke off is first reopened; the largest event of that stream.
  const drainMs = intSetting(env, 'PLAZA_MCP_CONNECT_DRAIN_MS');
  const reconnectMs = intSetting(env, 'PLAZA_MCP_CONNECT_RECONNECT_MS');
  const maxEventBytes = intSetting(env, 'PLAZA_MCP_CONNECT_MAX_EVENT_BYTES');
  return { base, target, renewal, headers, drainMs, reconnectMs, maxEventBytes };
}
