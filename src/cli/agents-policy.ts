/**
 * `plaza agents policy show|set|clear <agent>`: who an agent may call and how often, through
 * `GET|PUT|DELETE /api/agents/:id/policy` with an account API key (--key, else $PLAZA_API_KEY).
 * Plaza's URL: --url, else PUBLIC_BASE_URL, else the one `plaza agents login` stored, else
 * http://localhost:$PORT (8080). Exit 0 done, 1 refused or unreachable (the server's words in one
 * line), 2 usage.
 */
import { readFile } from 'node:fs/promises';

import type { Command } from 'commander';

import { credentialFile, loadCredential } from './credential-store.ts';
import { fetchOrSay } from './fetch-errors.ts';
import { describesPolicy, PolicyFlagError, type PolicyFlags, policyFromFlags } from './policy-flags.ts';
import { type AgentName, type PolicyAnswer, policyText } from './policy-text.ts';

type Env = Record<string, string | undefined>;

const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
const TIMEOUT_MS = 30_000;

class UsageError extends Error {}

/** Collects a repeatable option. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

interface Connection {
  url?: string;
  key?: string;
  json?: boolean;
}

interface Target {
  base: string;
  key: string;
}

function target(options: Connection, env: Env): Target {
  const key = options.key ?? (env['PLAZA_API_KEY']?.trim() || undefined);
  if (!key)
    throw new UsageError(
      'pass --key <account API key> or set PLAZA_API_KEY (keys: `plaza accounts create`, or the Account page)',
    );
  const url =
    options.url ??
    (env['PUBLIC_BASE_URL']?.trim() ||
      loadCredential(credentialFile(env))?.url ||
      `http://localhost:${env['PORT']?.trim() || '8080'}`);
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new UsageError(`not an http(s) URL: ${url}`);
  return { base: url.replace(/\/+$/, ''), key };
}

/** Sends one API request; a refusal becomes an Error carrying the server's own message. */
async function api(t: Target, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetchOrSay(`${t.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${t.key}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const json = (await res.json().catch(() => null)) as { message?: unknown; data?: unknown } | null;
  if (res.ok && json) return json.data;
  const said = typeof json?.message === 'string' && json.message !== '' ? `: ${json.message.slice(0, 500)}` : '';
  const hint = res.status === 404 && !json ? ' (is this Plaza? pass its base URL with --url)' : '';
  throw new Error(`${method} ${path} answered ${res.status}${said}${hint}`);
}

/**
 * The agent a command names: the account's agent with that id (`agt_…`, passed on as it is when the
 * account has none), else its one agent whose AGIN id or display name it is.
 */
async function findAgent(t: Target, name: string): Promise<AgentName> {
  const { agents } = (await api(t, 'GET', '/api/agents')) as { agents: Array<AgentName & { public?: boolean }> };
  const own = agents.filter((a) => !a.public);
  const byId = own.find((a) => a.id === name);
  if (byId) return byId;
  // Another account's agent: the policy route answers for it (403/404), as /api/agents/:id does.
  if (/^agt_[0-9a-z]{20,32}$/.test(name)) return { id: name };
  const matches = own.filter((a) => a.agin_id === name || a.display_name === name);
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    throw new UsageError(
      `${matches.length} agents are named ${name}: pass one's id (${matches.map((a) => a.id).join(', ')})`,
    );
  throw new UsageError(
    `no agent ${name} in this account (give its id agt_…, its AGIN id or its display name; \`curl -H 'authorization: Bearer …' ${t.base}/api/agents\` lists them)`,
  );
}

const policyPath = (agent: AgentName) => `/api/agents/${encodeURIComponent(agent.id)}/policy`;

function print(json: boolean | undefined, agent: AgentName, answer: PolicyAnswer): void {
  process.stdout.write(json ? `${JSON.stringify(answer, null, 2)}\n` : `${policyText(agent, answer)}\n`);
}

/** The policy of --file (`-`: standard input), or of the other options. */
async function policyToSet(options: PolicyFlags & { file?: string }): Promise<unknown> {
  const { file, ...flags } = options;
  if (file === undefined) {
    if (!describesPolicy(flags))
      throw new UsageError(
        'say what the agent may do: --allow/--deny <provider>/<tool>, --deny-annotation, --default, --per-minute, --per-day, --provider-limit, or --file policy.json (`clear` removes the policy)',
      );
    return policyFromFlags(flags);
  }
  if (describesPolicy(flags))
    throw new UsageError('--file holds the whole policy: give it alone, without rule or limit options');
  const text = await (file === '-'
    ? new Response(process.stdin as unknown as ReadableStream).text()
    : readFile(file, 'utf8'));
  try {
    const parsed = JSON.parse(text) as { data?: { policy?: unknown } };
    // The answer of `show --json` is accepted as it is: its own policy is the document.
    return parsed?.data?.policy ?? (parsed as { policy?: unknown }).policy ?? parsed;
  } catch (error) {
    throw new UsageError(`${file === '-' ? 'standard input' : file} is not JSON: ${(error as Error).message}`);
  }
}

/** Runs one subcommand with the one-line error and the exit codes of this command. */
async function run(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
    process.exitCode = EXIT.ok;
  } catch (error) {
    const usage = error instanceof UsageError || error instanceof PolicyFlagError;
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
    process.stderr.write(`plaza agents policy ${name}: ${message}\n`);
    process.exitCode = usage ? EXIT.usage : EXIT.failure;
  }
}

function connection(command: Command): Command {
  return command
    .option(
      '--url <base>',
      "Plaza's base URL (default: PUBLIC_BASE_URL, else the URL `plaza agents login` stored, else http://localhost:8080)",
    )
    .option('--key <api key>', 'account API key (default: $PLAZA_API_KEY, which keeps it out of process lists)')
    .option('--json', 'print the API answer as JSON');
}

/** Registers `plaza agents policy show|set|clear`. */
export function registerAgentPolicyCommands(program: Command, env: Env): void {
  const agents =
    program.commands.find((c) => c.name() === 'agents') ??
    program.command('agents').description('agent credentials for the gateway');
  const policy = agents
    .command('policy')
    .description('who an agent may call through the gateway, and how often (account API key)');

  connection(policy.command('show <agent>'))
    .description("an agent's own policy, the policy the gateway applies, and its calls against each limit")
    .action((name: string, options: Connection) =>
      run('show', async () => {
        const t = target(options, env);
        const agent = await findAgent(t, name);
        print(options.json, agent, (await api(t, 'GET', policyPath(agent))) as PolicyAnswer);
      }),
    );

  connection(policy.command('set <agent>'))
    .description("replace an agent's policy with the one the options (or --file) describe")
    .option(
      '--allow <provider/tool>',
      'allow tools matching the globs (* any run, ? one character); repeatable',
      collect,
    )
    .option('--deny <provider/tool>', 'deny tools matching the globs; any matching deny wins; repeatable', collect)
    .option(
      '--deny-annotation <hint[=true|false]>',
      'deny tools whose annotation has this value (e.g. destructiveHint); [<provider>/<tool>:]<hint>; repeatable',
      collect,
    )
    .option(
      '--allow-annotation <hint[=true|false]>',
      'allow tools whose annotation has this value (e.g. readOnlyHint); repeatable',
      collect,
    )
    .option('--default <allow|deny>', 'what happens to a call no rule matches (absent: deny if an allow rule exists)')
    .option('--per-minute <n>', 'calls per minute for this agent')
    .option('--per-day <n>', 'calls per day for this agent')
    .option(
      '--provider-limit <provider:min/day>',
      "this agent's calls to one provider, e.g. crm:10/500; repeatable",
      collect,
    )
    .option(
      '--file <policy.json>',
      'the whole policy document as JSON (- reads standard input; `show --json` output is accepted)',
    )
    .action((name: string, options: Connection & PolicyFlags & { file?: string }) =>
      run('set', async () => {
        const t = target(options, env);
        const { url: _url, key: _key, json, ...rest } = options;
        const document = await policyToSet(rest);
        const agent = await findAgent(t, name);
        print(json, agent, (await api(t, 'PUT', policyPath(agent), document)) as PolicyAnswer);
      }),
    );

  connection(policy.command('clear <agent>'))
    .description("remove an agent's own policy: the account default applies again")
    .action((name: string, options: Connection) =>
      run('clear', async () => {
        const t = target(options, env);
        const agent = await findAgent(t, name);
        const answer = (await api(t, 'DELETE', policyPath(agent))) as PolicyAnswer | null;
        if (options.json) process.stdout.write(`${JSON.stringify(answer ?? {}, null, 2)}\n`);
        else process.stdout.write(`Cleared: ${agent.display_name ?? agent.id} follows the account default policy.\n`);
      }),
    );
}
