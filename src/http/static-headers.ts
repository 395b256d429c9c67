import type { IncomingMessage, ServerResponse } from 'node:http';

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Runs a middleware that only ever sets fixed response headers (helmet) once, against a recording
 * response, and returns a middleware that sets the same headers directly: the same bytes on the
 * wire without the per-request work of a dozen small header middlewares. Throws at start-up if
 * the middleware did anything but set or remove headers synchronously.
 */
export function staticHeaders(middleware: Middleware): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const set = new Map<string, string | number | readonly string[]>();
  const removed = new Set<string>();
  let called = false;
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      set.set(name, value);
      removed.delete(name.toLowerCase());
      return recorder;
    },
    removeHeader(name: string) {
      set.delete(name);
      removed.add(name.toLowerCase());
    },
    getHeader: () => undefined,
  };
  middleware({ headers: {}, method: 'GET', url: '/' } as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    called = true;
  });
  if (!called) throw new Error('staticHeaders: the middleware did not finish synchronously');
  const headers = [...set];
  const remove = [...removed];
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    for (const name of remove) res.removeHeader(name);
    next();
  };
}
