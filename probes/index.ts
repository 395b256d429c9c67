/**
 * Probing of MCP endpoints and discovery from the public MCP registry. Framework-free: `src/`
 * supplies the stores (database), clock and logger, and decides when the loops run.
 */
export type { DemandRecorder, DemandRecorderOptions } from './demand.ts';
export { createDemandRecorder } from './demand.ts';
export type { Discovery, DiscoveryOptions, DiscoveryStore, PullReport } from './discovery/discovery.ts';
export { createDiscovery, DISCOVERY_LEASE, parseRetryAfter } from './discovery/discovery.ts';
export type {
  DiscoveredServer,
  RegistryDecision,
  RegistryPage,
  RequiredCredential,
} from './discovery/registry-page.ts';
export { decideEntry, parseRegistryPage, providerSlugFor, shortHash } from './discovery/registry-page.ts';
export type { FetchLike, GuardedFetch, GuardedFetchOptions, Resolver } from './guarded-fetch.ts';
export { createGuardedAgent, createGuardedFetch } from './guarded-fetch.ts';
export type { EndpointStatus, HealthPolicy, HealthState, ProbeVerdict } from './health-state.ts';
export { DEFAULT_HEALTH_POLICY, nextHealth, ONLINE_STATUSES } from './health-state.ts';
export type { HostBudget, HostBudgetDecision } from './host-budget.ts';
export { budgetHost, HostBudgetError, UNBOUNDED_HOST_BUDGET } from './host-budget.ts';
export type { ConcurrencyLimits, HostQueues } from './host-queues.ts';
export { createHostQueues } from './host-queues.ts';
export type { ProbedTool, ProbeLimits, ProbeOutcome } from './probe-endpoint.ts';
export { normaliseTool, probeEndpoint } from './probe-endpoint.ts';
export type { ProbeLog, ProbeRecord, ProbeStore, ProbeTarget } from './probe-store.ts';
export type { Prober, ProbeResult, ProberOptions } from './prober.ts';
export { createProber } from './prober.ts';
export type { ScheduleInput, SchedulePolicy } from './schedule.ts';
export { nextProbeDelayMs } from './schedule.ts';
export type { DownloadResult } from './source-download.ts';
export { downloadSource } from './source-download.ts';
export type {
  PassedStep,
  RiskVerdict,
  SourceCommand,
  SourceFinding,
  SourceInspector,
  SourceOutcome,
  SourceStore,
  SourceTarget,
} from './source-store.ts';
export type { SourceRunResult, SourceWorker, SourceWorkerOptions } from './source-worker.ts';
export { createSourceWorker, MAX_DEAD_REPROBES } from './source-worker.ts';
export type { BlockedReason } from './ssrf.ts';
export { assertAddressAllowed, assertHttpUrl, assertUrlLiterallyAllowed, classifyAddress, SsrfError } from './ssrf.ts';
export type { ToolIcon } from './tool-icon.ts';
