/**
 * An agent's client on the MCP SDK v2 (`@modelcontextprotocol/client`), which speaks revision
 * 2026-07-28 as well as the earlier ones: connected to a gateway endpoint (`/mcp`, `/mcp/p/<provider>`)
 * with the agent's bearer token, in the negotiation mode a test asks for.
 */
import {
  Client,
  type ClientCapabilities,
  StreamableHTTPClientTransport,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';

export interface V2ClientOptions {
  /** The client's name in its clientInfo (version `1`). */
  name: string;
  /** Pinned to 2026-07-28 unless given. */
  mode?: VersionNegotiationMode;
  /** Declared only when given. */
  capabilities?: ClientCapabilities;
  /** Runs before connecting, e.g. to answer the requests the declared capabilities invite. */
  setup?: (client: Client) => void;
}

/** Connects an SDK v2 client to `url`, sending `Bearer <token>` when a token is given. */
export async function connectV2(url: string, token: string | undefined, options: V2ClientOptions): Promise<Client> {
  const client = new Client(
    { name: options.name, version: '1' },
    {
      versionNegotiation: { mode: options.mode ?? { pin: '2026-07-28' } },
      ...(options.capabilities ? { capabilities: options.capabilities } : {}),
    },
  );
  options.setup?.(client);
  const requestInit = token === undefined ? undefined : { headers: { authorization: `Bearer ${token}` } };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), requestInit ? { requestInit } : {}));
  return client;
}
