/**
 * How the bridge's commands stop on bad input (a line on stderr, exit code 1) and read their
 * whole-number settings from the environment (exit code 2 on a bad one), and how they say a
 * duration. Shared by `plaza mcp connect` and `plaza agents login`.
 */
import { ClientEnvSchema } from '../../../config/index.ts';

export function fail(message: string): never {
  process.stderr.write(`plaza: ${message}\n`);
  process.exit(1);
}

/**
 * A whole-number setting of the bridge from the environment (its default, range and description in
 * config/schema.ts's ClientEnvSchema; the default when unset or empty); anything else ends the
 * command with exit code 2, naming the variable.
 */
export function intSetting(
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
export function duration(ms: number): string {
  return ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`;
}
