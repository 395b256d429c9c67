import type { ServerResponse } from 'node:http';

import { createSseParser } from '../../src/kernel/index.ts';
import { parseJson } from '../internal/json-rpc.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';

/** What `relayEvents` does with one message: write this in its place, skip it, or end the relay. */
export const END_RELAY = Symbol('end relay');

/**
 * Copies an upstream event stream's messages to `res` as events, each through `transform`, until
 * either stream ends (or `transform` says so). It reads no faster than the client takes them, and
 * an event past `maxEvent` characters ends it. True when `transform` ended it.
 */
export async function relayEvents(
  upstream: UpstreamHttpResponse,
  res: ServerResponse,
  maxEvent: number,
  transform: (message: unknown) => unknown,
): Promise<boolean> {
  const parser = createSseParser({ maxEventLength: maxEvent });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of upstream.body) {
      for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
        if (event.data === undefined || event.data === '') continue;
        let message: unknown;
        try {
          message = parseJson(event.data);
        } catch {
          continue;
        }
        const out = transform(message);
        if (out === END_RELAY) return true;
        if (out === undefined) continue;
        if (!res.write(`event: message\ndata: ${JSON.stringify(out)}\n\n`)) {
          await new Promise<void>((resolve) => {
            res.once('drain', resolve);
            res.once('close', resolve);
          });
        }
        if (res.destroyed) return false;
      }
    }
  } catch {
    // Cut (the client left, the server stops, an event past the bound): the relay ends here.
  }
  return false;
}
