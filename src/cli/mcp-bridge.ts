import { randomBytes } from 'node:crypto';

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Command } from 'commander';

import { ClientEnvSchema } from '../../config/index.ts';
import { credentialFile, readCredential, saveCredential } from './credential-store.ts';
import { boundedFetch, notificationStreamReconnection } from './mcp-bridge-fetch.ts';
import {
  type BridgeAnswer,
  bridgeError,
  type ClientMessage,
  INVALID_REQUEST,
  lineWriter,
  readClientLine,
  readLines,
} from './mcp-bridge-input.ts';
import { providerWarning } from './mcp-bridge-provider.ts';
import { GatewayRefusal } from './mcp-bridge-refusal.ts';
import { browserLogin } from './oauth-login.ts';
import { createTokenRenewal, renewingFetch } from './oauth-renewal.ts';

function fail(message: string): never {
  process.stderr.write(`plaza: ${message}\n`);
  process.exit(1);
}

/**
 * A whole-number setting of the bridge from the environment (its default, range and description in
 * config/schema.ts's ClientEnvSchema; the default when unset or empty); anything else ends the
 * command with exit code 2, naming the variable.
 */
function intSetting(
  env: Record<string, string | undefined>,
  name: 'PLAZA_MCP_CONNECT_DRAIN_MS' | 'PLAZA_MCP_CONNECT_RECONNECT_MS' | 'PLAZA_MCP_CONNECT_MAX_EVENT_BYTES',
): number {
  const schema = ClientEnvSchema.shape[name];
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return schema.parse(undefined);
  const min = schema.unwrap().minValue ?? 0;
  const max = schema.unwrap().maxValue ?? Number.MAX_SAFE_INTEGER;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    process.stderr.write(`plaza: ${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})\n`);
    process.exit(2);
  }
  return value;
}

/** `ms` as the bridge says it: whole seconds as "10 s", anything else in milliseconds. */
function duration(ms: number): string {
  return ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`;
}

/**
 * Bridges an MCP client speaking stdio to the gateway over streamable HTTP, message for message.
 * The agent credential comes from the credential store; only the third-party credential may come
 * from the environment (named by --upstream-token-env), as spec §2.7 asks.
 */
async function connect(
  provider: string | undefined,
  options: { all?: boolean; upstreamTokenEnv?: string; upstreamProvider?: string; url?: string },
  env: Record<string, string | undefined>,
): Promise<void> {
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
  // Loaded here, not at the top: every `plaza` command registers this one.
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  // A POST's answer that ended without the response to one of its requests: that request is
  // answered with an error (after a moment, in which the SDK hands over what it did parse).
  const endedWithout = (ids: Array<string | number>, why: string) => {
    setTimeout(() => {
      for (const id of ids) {
        if (!unanswered.has(id) || arrived.has(id)) continue;
        reply({ jsonrpc: '2.0', id, error: { code: -32603, message: why } });
      }
    }, 100).unref();
  };
  const inner = renewal ? renewingFetch(renewal, fetch) : fetch;
  const open = () =>
    new StreamableHTTPClientTransport(target, {
      requestInit: { headers },
      fetch: boundedFetch(endedWithout, maxEventBytes, inner),
      reconnectionOptions: notificationStreamReconnection(reconnectMs),
    });
  let upstream = open();
  const write = lineWriter(process.stdout);
  let stopReading = () => {};
  let closing = false;
  // The client ends the session by closing our stdin (MCP stdio transport). The gateway session is
  // ended too (DELETE), waiting at most 2 s for a gateway that is gone.
  const close = async () => {
    if (closing) return;
    closing = true;
    const ended = upstream.sessionId ? upstream.terminateSession().catch(() => undefined) : undefined;
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    await upstream.close().catch(() => undefined);
    stopReading();
    process.exit(0);
  };
  // Requests sent before stdin ended still get their answers (e.g. `… | plaza mcp connect x`),
  // for at most PLAZA_MCP_CONNECT_DRAIN_MS (10 s).
  const unanswered = new Set<string | number>();
  let settled: (() => void) | undefined;
  // A client that exits closes our stdout too: writing then fails (EPIPE). The bridge ends the
  // session and exits instead of dying on an unhandled 'error'.
  // eslint-disable-next-line @typescript-eslint/no-floating-promises -- close catches what it awaits, then exits
  process.stdout.on('error', () => void close());
  const stdinEnded = () => {
    const answered = unanswered.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (settled = resolve));
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- both only resolve; reply writes, close catches
    void Promise.race([answered, new Promise((resolve) => setTimeout(resolve, drainMs).unref())]).then(() => {
      // Every request gets an answer (JSON-RPC 2.0): one the gateway has not answered by now is
      // answered by the bridge, which then ends, rather than left without a line.
      for (const id of [...unanswered]) {
        if (!arrived.has(id))
          reply({
            jsonrpc: '2.0',
            id,
            error: {
              code: -32603,
              message: `the bridge is ending (its client closed stdin) and the gateway had not answered within ${duration(drainMs)}`,
            },
          });
      }
      return close();
    });
  };
  /**
   * The client's initialize while the gateway has not answered it: the session id comes with that
   * answer, so what the client sends meanwhile (its initialized notification, a first tools/list
   * pipelined behind) waits for it, then goes in the order it came. Sent at once, it reached the
   * gateway without a session id and was refused (the notification silently).
   */
  let handshake: Handshake | undefined;
  /** Answers the gateway sent, not yet written to the client. */
  const arrived = new Set<string | number>();
  const answer = (id: string | number) => {
    arrived.delete(id);
    if (unanswered.delete(id) && unanswered.size === 0) settled?.();
    if (handshake?.id === id) handshake.over();
  };
  /** The protocol version the gateway answered the client's initialize with. */
  let negotiated: string | undefined;
  /** The client's batches (protocol 2025-03-26) still waiting for answers, by the ids of their requests. */
  const batches = new Map<string | number, BatchReply>();
  /**
   * Writes a message to the client. An answer to a request of a batch waits for the others: the
   * batch is answered as one array (JSON-RPC 2.0 §6).
   */
  const reply = (message: JSONRPCMessage | BridgeAnswer) => {
    const id =
      !('method' in message) && 'id' in message && (typeof message.id === 'string' || typeof message.id === 'number')
        ? message.id
        : undefined;
    const batch = id === undefined ? undefined : batches.get(id);
    if (batch && id !== undefined) {
      batches.delete(id);
      batch.answers.push(message);
      if (--batch.waiting > 0) return;
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
      void write(batch.answers).then(() => batch.ids.forEach(answer));
      return;
    }
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
    void write(message).then(() => {
      if (id !== undefined) answer(id);
    });
  };
  /** Says on stderr what the bridge did not pass on, and answers it when JSON-RPC says so. */
  const refuse = (item: Extract<ClientMessage, { kind: 'refused' }>) => {
    process.stderr.write(`plaza: not passed on to the gateway: ${item.why}\n`);
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
    if (item.answer) void write(item.answer);
  };
  /** Members already named on stderr as left off (once each). */
  const droppedNamed = new Set<string>();
  const dropped = (names: string[]) => {
    const fresh = names.filter((name) => !droppedNamed.has(name));
    if (fresh.length === 0) return;
    for (const name of fresh) droppedNamed.add(name);
    process.stderr.write(
      `plaza: passed on without the member(s) JSON-RPC 2.0 does not name: ${fresh.map((name) => JSON.stringify(name)).join(', ')}\n`,
    );
  };
  // The client's initialize and initialized messages, to open a new gateway session with (below).
  let initialize: JSONRPCMessage | undefined;
  /** Settles once the start-up check of the provider has said what it found (see providerWarning). */
  let providerChecked: Promise<void> = Promise.resolve();
  let initialized: JSONRPCMessage | undefined;
  /** Answers to the bridge's own requests (a new session's initialize), kept from the client. */
  const own = new Map<string, (message: JSONRPCMessage) => void>();
  let renewing: Promise<void> | undefined;
  /** Requests each transport has in flight: a replaced one is closed once they are over. */
  const inFlight = new Map<typeof upstream, number>();
  /** Transports a new session replaced, closed once their requests in flight are over. */
  const retired = new Set<typeof upstream>();
  const retire = (transport: typeof upstream) => {
    retired.add(transport);
    if (!inFlight.get(transport)) {
      retired.delete(transport);
      void transport.close().catch(() => undefined);
    }
  };
  /**
   * A new gateway session, opened with the client's own initialize: the gateway answers 404 to a
   * session it (or the provider behind it) no longer knows, as when the provider restarted, and
   * the spec has the client start a new one. The stdio client never learns of it; without this,
   * every request of its session failed until it was restarted. The new transport replaces the
   * old one only once its session is open: when it cannot be (the gateway down, a 401, a 5xx),
   * the old one stays, and the next message that gets its 404 tries again.
   */
  const renew = () =>
    (renewing ??= (async () => {
      const fresh = open();
      wire(fresh);
      const id = `plaza-bridge-${randomBytes(6).toString('hex')}`;
      const answered = new Promise<JSONRPCMessage>((resolve) => own.set(id, resolve));
      try {
        await fresh.start();
        await fresh.send({
          ...(initialize as { method: string; params?: Record<string, unknown> }),
          jsonrpc: '2.0',
          id,
        });
        const answer = await Promise.race([
          answered,
          new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000).unref()),
        ]);
        if (!answer) throw new Error('the gateway did not answer its initialize within 30 s');
        if ('error' in answer) throw new Error(`the gateway refused it: ${answer.error.message}`);
        agreeOn(fresh, answer);
        if (initialized) await fresh.send(initialized);
      } catch (error) {
        if (fresh.sessionId) void fresh.terminateSession().catch(() => undefined);
        void fresh.close().catch(() => undefined);
        const why = error instanceof Error ? error.message : String(error);
        process.stderr.write(
          `plaza: gateway: the session had ended, and a new one could not be opened (${why}); the next message tries again\n`,
        );
        throw new RenewalFailed(why);
      } finally {
        own.delete(id);
      }
      const stale = upstream;
      upstream = fresh;
      retire(stale);
      process.stderr.write(
        'plaza: gateway: the session had ended (the provider or Plaza restarted); a new one is open\n',
      );
    })().finally(() => (renewing = undefined)));
  /** Sends on `transport`, counting it in flight there. */
  const sendOn = async (transport: typeof upstream, message: JSONRPCMessage | JSONRPCMessage[]) => {
    inFlight.set(transport, (inFlight.get(transport) ?? 0) + 1);
    try {
      await transport.send(message);
    } finally {
      const left = (inFlight.get(transport) ?? 1) - 1;
      if (left > 0) inFlight.set(transport, left);
      else {
        inFlight.delete(transport);
        if (retired.has(transport)) retire(transport);
      }
    }
  };
  /** Sends to the gateway; a request the gateway refuses for a session it no longer knows goes again in a new one, once. */
  const send = async (message: JSONRPCMessage | JSONRPCMessage[]): Promise<void> => {
    // Not into the new session before it is initialised.
    if (renewing) await renewing.catch(() => undefined);
    const via = upstream;
    try {
      await sendOn(via, message);
    } catch (error) {
      if (
        !(error instanceof GatewayRefusal) ||
        error.status !== 404 ||
        initialize === undefined ||
        message === initialize ||
        closing
      )
        throw error;
      // Sent in a session already replaced (its 404 came after the new one opened): not again.
      if (upstream === via || renewing) await renew();
      await sendOn(upstream, message);
    }
  };
  /** Answers each of `ids` with the error a failed send gives. */
  const failed = (ids: Array<string | number>) => (error: unknown) => {
    if (error instanceof RenewalFailed) {
      for (const id of ids) reply({ jsonrpc: '2.0', id, error: { code: -32603, message: error.message } });
      return;
    }
    // Already on stderr: the transport reports every failed send to onerror too.
    if (error instanceof GatewayRefusal) {
      // The gateway's own answer, under the request's id; the bridge's words only when it gave none.
      const answer = () => {
        for (const id of ids) reply(error.answerFor(id));
      };
      // A refused handshake ends the client's session, and with it often this process: what the
      // provider check found (a credential it needs, say) is said first, within 2 s.
      const handshakeId = initialize !== undefined && 'id' in initialize ? initialize.id : undefined;
      if (handshakeId !== undefined && ids.includes(handshakeId)) {
        Promise.race([providerChecked, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]).then(
          answer,
          answer,
        );
      } else answer();
      return;
    }
    const reason = `gateway request failed: ${(error as Error).message}`;
    // The client is told at once rather than left to its own timeout.
    for (const id of ids) reply({ jsonrpc: '2.0', id, error: { code: -32603, message: reason } });
  };
  const onMessage = (message: JSONRPCMessage) => {
    const requestId = 'method' in message && 'id' in message ? message.id : undefined;
    if (requestId !== undefined) unanswered.add(requestId);
    if ('method' in message && message.method === 'initialize') initialize = message;
    if ('method' in message && message.method === 'notifications/initialized') initialized = message;
    const forward = () => send(message).catch(failed(requestId === undefined ? [] : [requestId]));
    // Callbacks of one promise run in the order they were added: the held messages go in order.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- answered only resolves; forward catches (failed answers the client)
    if (handshake) void handshake.answered.then(forward);
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- as above
    else void forward();
    if ('method' in message && message.method === 'initialize' && requestId !== undefined) {
      let release = () => {};
      const answered = new Promise<void>((resolve) => (release = resolve));
      const opened: Handshake = {
        id: requestId,
        answered,
        over: () => {
          if (handshake === opened) handshake = undefined;
          release();
        },
      };
      handshake = opened;
    }
  };
  /**
   * A batch of the client's: passed on as one when the session speaks 2025-03-26, the one MCP
   * version with batches (2025-06-18 removed them); otherwise each request in it is refused.
   */
  const onBatch = (items: ClientMessage[]) => {
    const answers: BridgeAnswer[] = [];
    const messages: JSONRPCMessage[] = [];
    for (const item of items) {
      if (item.kind === 'refused') {
        process.stderr.write(`plaza: not passed on to the gateway (in a batch): ${item.why}\n`);
        if (item.answer) answers.push(item.answer);
      } else {
        dropped(item.dropped);
        messages.push(item.message);
      }
    }
    const requestIds = messages.flatMap((m) => ('method' in m && 'id' in m ? [m.id] : []));
    const why =
      negotiated !== BATCH_VERSION
        ? `JSON-RPC batches are not part of MCP ${negotiated ?? 'before initialize is answered'} (only 2025-03-26 has them): send each message on a line of its own`
        : new Set(requestIds).size < requestIds.length || requestIds.some((id) => unanswered.has(id))
          ? 'Request ids must be unique within a batch and among requests not yet answered.'
          : undefined;
    if (why !== undefined) {
      process.stderr.write(`plaza: not passed on to the gateway: a batch (${why})\n`);
      for (const id of requestIds) answers.push(bridgeError(id, INVALID_REQUEST, `Invalid Request: ${why}`));
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
      if (answers.length > 0) void write(answers);
      return;
    }
    if (messages.length === 0) {
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
      if (answers.length > 0) void write(answers);
      return;
    }
    // 2025-03-26 keeps initialize out of batches; an initialized notification may be in one.
    for (const m of messages) if ('method' in m && m.method === 'notifications/initialized') initialized = m;
    if (requestIds.length > 0) {
      const batch: BatchReply = { ids: requestIds, waiting: requestIds.length, answers };
      for (const id of requestIds) {
        unanswered.add(id);
        batches.set(id, batch);
      }
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- write only resolves (its message is JSON read from JSON)
    } else if (answers.length > 0) void write(answers);
    void send(messages).catch(failed(requestIds));
  };
  const onLine = (line: string) => {
    const read = readClientLine(line);
    if (read === undefined) return;
    if (read.kind === 'refused') return refuse(read);
    if (read.kind === 'message') {
      dropped(read.dropped);
      return onMessage(read.message);
    }
    // Decided once the initialize is answered, when the version is known.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- answered only resolves; onBatch's sends are caught (failed answers the client)
    if (handshake) void handshake.answered.then(() => onBatch(read.items));
    else onBatch(read.items);
  };
  /**
   * Takes the protocol version an initialize answer agreed on, and has `transport` send it as
   * MCP-Protocol-Version on every later request, as the spec asks of an HTTP client (without it a
   * server assumes 2025-03-26).
   */
  const agreeOn = (transport: typeof upstream, answer: JSONRPCMessage) => {
    const version = 'result' in answer ? (answer.result as { protocolVersion?: unknown }).protocolVersion : undefined;
    if (typeof version !== 'string') return;
    negotiated = version;
    transport.setProtocolVersion(version);
  };
  const wire = (transport: typeof upstream) => {
    transport.onmessage = (message) => {
      const answered = !('method' in message) && 'id' in message ? message.id : undefined;
      const mine = typeof answered === 'string' ? own.get(answered) : undefined;
      if (mine) return mine(message);
      if (answered !== undefined && initialize && 'id' in initialize && answered === initialize.id)
        agreeOn(transport, message);
      if (answered !== undefined && unanswered.has(answered)) arrived.add(answered);
      reply(message);
    };
    transport.onerror = (error) => process.stderr.write(`plaza: gateway: ${error.message}\n`);
  };
  wire(upstream);
  await upstream.start();
  stopReading = readLines(process.stdin, {
    onLine,
    onOversize: () =>
      refuse({
        kind: 'refused',
        why: `a line longer than ${MAX_LINE_BYTES} bytes`,
        answer: bridgeError(null, INVALID_REQUEST, `Invalid Request: a message longer than ${MAX_LINE_BYTES} bytes`),
      }),
    onEnd: stdinEnded,
    maxLineBytes: MAX_LINE_BYTES,
  });
  // Said, not refused: the bridge serves meanwhile, as Plaza may come up, or the provider online,
  // later (an MCP client starts its servers when it starts).
  const checked = options.all ? headers['x-platform-upstream-provider'] : provider;
  if (checked !== undefined) {
    providerChecked = providerWarning({
      base,
      provider: checked,
      via: options.all ? 'credential' : 'endpoint',
      credentialEnv: options.upstreamTokenEnv,
    })
      .then((line) => {
        if (line !== undefined) process.stderr.write(`plaza: ${line}\n`);
      })
      .catch((error: unknown) => {
        process.stderr.write(`plaza: could not check provider "${checked}": ${(error as Error).message}\n`);
      });
  }
}

/** The one MCP protocol version with JSON-RPC batches (added in 2025-03-26, removed in 2025-06-18). */
const BATCH_VERSION = '2025-03-26';
/** Longest line the bridge reads from its client (the SDK's stdio transport allowed as much). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** A gateway session that ended (404) and could not be replaced: what the requests waiting on it are answered. */
class RenewalFailed extends Error {
  override readonly name = 'RenewalFailed';
  constructor(why: string) {
    super(
      `the gateway session had ended (HTTP 404: the provider or Plaza restarted, or the session expired) and a new one could not be opened: ${why}. The next request tries again.`,
    );
  }
}

/** A batch of the client's whose answers are gathered to go back as one array. */
interface BatchReply {
  ids: Array<string | number>;
  /** How many of its requests are not answered yet. */
  waiting: number;
  answers: unknown[];
}

/** A client's initialize the gateway has not answered yet: `over` once it has (or it failed). */
interface Handshake {
  id: string | number;
  answered: Promise<void>;
  over: () => void;
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

/** `plaza agents login` and `plaza mcp connect`. */
export function registerAgentCommands(program: Command, env: Record<string, string | undefined>): void {
  const agents =
    program.commands.find((c) => c.name() === 'agents') ??
    program.command('agents').description('agent credentials for the gateway');
  agents
    .command('login')
    .description(
      'store an agent credential (file, mode 0600) for `plaza mcp connect`: an agent token, or sign in through the browser',
    )
    .option('--token <token>', 'the agent token from POST /api/agents')
    .option(
      '--browser',
      "sign in through the browser instead (MCP authorization): pick or create the agent on Plaza's consent page",
    )
    .option(
      '--provider <provider>',
      'with --browser: the provider `plaza mcp connect <provider>` bridges to (the sign-in is for its endpoint)',
    )
    .option('--all', 'with --browser: sign in for /mcp, which `plaza mcp connect --all` bridges to')
    .option('--no-open', 'with --browser: print the sign-in URL without opening a browser')
    .option('--url <url>', 'Plaza base URL', 'http://localhost:8080')
    .action(
      async (options: {
        token?: string;
        browser?: boolean;
        provider?: string;
        all?: boolean;
        open: boolean;
        url: string;
      }) => {
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
      },
    );

  program
    .command('mcp')
    .description('MCP client helpers')
    .command('connect [provider]')
    .description('a stdio MCP server bridging to the gateway (/mcp/p/<provider>, or /mcp with --all)')
    .option('--all', 'bridge to the aggregated /mcp endpoint')
    .option('--upstream-token-env <NAME>', 'environment variable holding your third-party credential for the provider')
    .option('--upstream-provider <provider>', 'with --all: the one provider the credential is sent to')
    .option('--url <url>', 'override the stored Plaza base URL')
    .action(
      (
        provider: string | undefined,
        options: { all?: boolean; upstreamTokenEnv?: string; upstreamProvider?: string; url?: string },
      ) => connect(provider, options, env),
    );
}
