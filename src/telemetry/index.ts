/** OpenTelemetry start-up, kept in one place (DESIGN.md "OpenTelemetry in ESM"). */
export type { Telemetry, TelemetryOptions } from './start.ts';
export { startTelemetry } from './start.ts';
