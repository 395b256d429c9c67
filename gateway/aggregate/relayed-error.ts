/**
 * A provider's JSON-RPC error that `/mcp` relays to a 2026-07-28 caller as that error rather than
 * as an `isError` result: -32021 (MissingRequiredClientCapability), which names what the caller
 * itself must declare (its capabilities go upstream with the call), so it is the caller's error,
 * and the spec has it answered with HTTP 400 whoever produced it.
 */
import { RPC_ERRORS } from '../json-rpc-errors.ts';

/** The JSON-RPC error a caller gets as such. */
export interface RelayedRpcError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** Thrown by callTool (after the call's receipt is recorded) to answer with `error` itself. */
export class CallerRpcError extends Error {
  readonly error: RelayedRpcError;

  constructor(error: RelayedRpcError) {
    super(error.message);
    this.error = error;
    this.name = 'CallerRpcError';
  }

  /** The HTTP status it is answered with (MCP 2026-07-28: 400 for -32021). */
  get status(): number {
    return this.error.code === RPC_ERRORS.missingClientCapability ? 400 : 200;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The error of a provider's answer a 2026-07-28 caller gets as that error (-32021, its data's
 * `requiredCapabilities` kept when it is a capabilities object), or undefined.
 */
export function relayedError(response: unknown): RelayedRpcError | undefined {
  const error = isRecord(response) ? response['error'] : undefined;
  if (!isRecord(error) || error['code'] !== RPC_ERRORS.missingClientCapability) return undefined;
  const message =
    typeof error['message'] === 'string' ? error['message'].slice(0, 1000) : 'Missing required client capability';
  const required = isRecord(error['data']) ? error['data']['requiredCapabilities'] : undefined;
  const capabilities = isRecord(required)
    ? Object.fromEntries(
        Object.keys(required)
          .slice(0, 20)
          .map((name) => [name.slice(0, 100), {}]),
      )
    : undefined;
  return {
    code: RPC_ERRORS.missingClientCapability,
    message,
    ...(capabilities ? { data: { requiredCapabilities: capabilities } } : {}),
  };
}
