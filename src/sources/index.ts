/** The package source registry (spec §2.10, §3.2, §4.3): records, the worker's store, the scan. */
export type { SourcesDeps } from './create-sources.ts';
export { createSources, createSourcesWorker } from './create-sources.ts';
export type { DenyEntry } from './deny-list.ts';
export { BUILTIN_DENY_LIST, loadDenyList } from './deny-list.ts';
export type { SourceBody } from './input.ts';
export { parseSourceBody, SourceBodySchema } from './input.ts';
export { registrationLimitKey } from './limit-key.ts';
export { rejectionMail } from './notify.ts';
export { writesOutsideRoot } from './outside-root.ts';
export { scanPackageTarget } from './package-scan.ts';
export { renderEvent, renderShareEntry, renderSource } from './render.ts';
export { scanOffThread, scanPackageDir, verdictOf } from './scan.ts';
export type { SourceFilter, SourceService } from './source-service.ts';
export type { PackageSource, SourceEvent, SourceStatus, SourceTrust } from './types.ts';
export { SOURCE_STATUSES, TRUST_LABELS } from './types.ts';
