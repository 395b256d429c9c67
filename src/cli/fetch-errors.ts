/**
 * undici's "fetch failed" names neither the address nor the cause: the error this returns does
 * (`cannot reach http://localhost:8080/…: connect ECONNREFUSED 127.0.0.1:8080`). Anything but
 * fetch's network TypeError (an abort or a timeout, which callers tell apart by name) is returned
 * as it is.
 */
export function unreachable(input: string | URL | Request, error: unknown): unknown {
  if (!(error instanceof TypeError)) return error;
  const url = input instanceof Request ? input.url : String(input);
  // localhost tried on ::1 and 127.0.0.1 fails with an AggregateError: a code, an empty message.
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const why =
    typeof cause?.message === 'string' && cause.message
      ? cause.message
      : typeof cause?.code === 'string'
        ? cause.code
        : error.message;
  return new TypeError(`cannot reach ${url}: ${why}`, { cause: error });
}

/** `fetch`, failing with an error that names the address it could not reach and why. */
export async function fetchOrSay(input: string | URL, init?: RequestInit): Promise<Response> {
  return fetch(input, init).catch((error: unknown) => {
    throw unreachable(input, error);
  });
}
