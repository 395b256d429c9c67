/**
 * `plaza mcp connect`: bridges an MCP client speaking stdio to the gateway over streamable HTTP,
 * message for message. Puts the parts together: the target (target.ts), the replies to the client
 * (replies.ts), the gateway session (session.ts), the client's input (client-input.ts) and the
 * ending (ending.ts), over one shared state (state.ts).
 */
import { boundedFetch, notificationStreamReconnection } from '../mcp-bridge-fetch.ts';
import { lineWriter, readLines } from '../mcp-bridge-input.ts';
import { providerWarning } from '../mcp-bridge-provider.ts';
import { renewingFetch } from '../oauth-renewal.ts';
import { createClientInput, MAX_LINE_BYTES } from './client-input.ts';
import { createEnding } from './ending.ts';
import { createReplies } from './replies.ts';
import { createGatewaySession } from './session.ts';
import { createBridgeState } from './state.ts';
import { bridgeTarget, type ConnectOptions } from './target.ts';

/**
 * Bridges an MCP client speaking stdio to the gateway over streamable HTTP, message for message.
 * The agent credential comes from the credential store; only the third-party credential may come
 * from the environment (named by --upstream-token-env), as spec §2.7 asks.
 */
export async function connect(
  provider: string | undefined,
  options: ConnectOptions,
  env: Record<string, string | undefined>,
): Promise<void> {
  const { base, target, renewal, headers, drainMs, reconnectMs, maxEventBytes } = bridgeTarget(provider, options, env);
  // Loaded here, not at the top: every `plaza` command registers this one.
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  // A POST's answer that ended without the response to one of its requests: that request is
  // answered with an error (after a moment, in which the SDK hands over what it did parse).
  const endedWithout = (ids: Array<string | number>, why: string) => {
    setTimeout(() => {
      for (const id of ids) {
        if (!state.unanswered.has(id) || state.arrived.has(id)) continue;
        replies.reply({ jsonrpc: '2.0', id, error: { code: -32603, message: why } });
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
  const state = createBridgeState(open());
  const write = lineWriter(process.stdout);
  const replies = createReplies(state, write);
  const ending = createEnding(state, { drainMs, reply: replies.reply });
  // A client that exits closes our stdout too: writing then fails (EPIPE). The bridge ends the
  // session and exits instead of dying on an unhandled 'error'.
  // eslint-disable-next-line @typescript-eslint/no-floating-promises -- close catches what it awaits, then exits
  process.stdout.on('error', () => void ending.close());
  const session = createGatewaySession(state, { open, reply: replies.reply });
  const input = createClientInput(state, { replies, send: session.send, write });
  session.wire(state.upstream);
  await state.upstream.start();
  state.stopReading = readLines(process.stdin, {
    onLine: input.onLine,
    onOversize: input.onOversize,
    onEnd: ending.stdinEnded,
    maxLineBytes: MAX_LINE_BYTES,
  });
  // Said, not refused: the bridge serves meanwhile, as Plaza may come up, or the provider online,
  // later (an MCP client starts its servers when it starts).
  const checked = options.all ? headers['x-platform-upstream-provider'] : provider;
  if (checked !== undefined) {
    state.providerChecked = providerWarning({
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
