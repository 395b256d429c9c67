import type { EndpointStatus, ProbedTool, RequiredCredential } from '../../probes/index.ts';

/** Per-AGIN limits a provider declares on its listing: calls per minute and per day of each agent. */
export interface AginLimits {
  per_minute?: number;
  per_day?: number;
}

/** Where a listing came from. */
export type EndpointSource = 'manual' | 'discovered';

/** A listed MCP endpoint: metadata and URL only (spec §2.1), plus its health. */
export interface Endpoint {
  id: string;
  provider: string;
  url: string;
  registeredBy: string;
  /** The account that owns the listing (made with its API key); null when it belongs to nobody. */
  accountId: string | null;
  source: EndpointSource;
  registryName: string | null;
  aginSupport: boolean;
  summary: string;
  audience: string | null;
  requiredCredentials: RequiredCredential[];
  purpose: string | null;
  risk: string | null;
  /** Per-AGIN limits the provider declares, enforced by the gateway (issue 35); null: none. */
  aginLimits: AginLimits | null;
  status: EndpointStatus;
  toolCount: number;
  lastProbeAt: Date | null;
  lastProbeOk: boolean | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  /** The MCP revisions the endpoint offers, newest first, as the last answering probe saw them; [] until one answered. */
  protocolVersions: string[];
  /** Its MCP capabilities, as that probe saw them; null until one answered. */
  capabilities: Record<string, unknown> | null;
  nextProbeAt: Date;
  createdAt: Date;
}

/** A tool of an online endpoint (spec §2.3), with its endpoint's health. */
export interface Tool extends ProbedTool {
  id: string;
  endpointId: string;
  provider: string;
  health: 'healthy' | 'degraded';
}

/** One recorded probe. */
export interface ProbeRunRecord {
  startedAt: Date;
  ok: boolean;
  latencyMs: number;
  protocolVersion: string | null;
  serverInfo: Record<string, unknown> | null;
  toolCount: number;
  error: string | null;
}

/** A page of results and the cursor of the next page, if any. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
