/** The marketplace as the gateway sees it (online connectors, tools, session key) and Plaza's own `platform` tools. */
export type { ConnectorCatalogOptions } from './connector-catalog.ts';
export { createConnectorCatalog } from './connector-catalog.ts';
export type { PlatformServerOptions } from './platform-server.ts';
export { createPlatformServer } from './platform-server.ts';
export type { PlatformTool, PlatformToolDeps, PlatformTools } from './platform-tools.ts';
export { createPlatformTools, PLATFORM_PROVIDER } from './platform-tools.ts';
export { gatewaySessionKey } from './session-key.ts';
export { createTaskDirectory } from './task-directory.ts';
