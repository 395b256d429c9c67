/** The marketplace as the gateway sees it: online connectors, their tools, the session key. */
export type { ConnectorCatalogOptions } from './connector-catalog.ts';
export { createConnectorCatalog } from './connector-catalog.ts';
export { gatewaySessionKey } from './session-key.ts';
