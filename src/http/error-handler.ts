import type { ServerResponse } from 'node:http';

import type { NextFunction, Request, Response } from 'express';

import { NotFoundError, PlazaError, ValidationError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { type ErrorResponse, renderError, type Surface, surfaceOf } from './error-table.ts';

/** A layer of an Express 5 router stack, as far as finding a path's methods needs it. */
interface RouteLayer {
  match(path: string): boolean;
  path?: string;
  route?: { methods: Record<string, boolean> };
  handle?: { stack?: RouteLayer[] };
}

/** The methods the routes of `stack` take at `path` (mounted routers walked under their mount path). */
function methodsAt(stack: readonly RouteLayer[], path: string, out: Set<string>): Set<string> {
  for (const layer of stack) {
    if (layer.route) {
      if (layer.match(path))
        for (const [method, on] of Object.entries(layer.route.methods))
          if (on && method !== '_all') out.add(method.toUpperCase());
    } else if (layer.handle?.stack && layer.match(path)) {
      const mount = layer.path ?? '';
      methodsAt(layer.handle.stack, path.slice(mount === '/' ? 0 : mount.length) || '/', out);
    }
  }
  return out;
}

/**
 * Unknown routes: a 404 in the surface's shape — or, for a path a route serves with other methods,
 * a 405 with `Allow` naming them (`GET /api/mcp/listings`: listings are read at /api/mcp/endpoints).
 * `app` is the application whose router is searched (by then every route is registered).
 */
export function notFound(app?: { router?: { stack?: RouteLayer[] } }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const stack = app?.router?.stack;
    const allowed = stack ? methodsAt(stack, req.path, new Set()) : new Set<string>();
    if (allowed.has('GET')) allowed.add('HEAD');
    if (allowed.size > 0 && !allowed.has(req.method)) {
      const list = [...allowed].sort();
      res.setHeader('Allow', list.join(', '));
      next(
        new PlazaError(
          'method_not_allowed',
          `${req.method} is not allowed on ${req.path}; it takes ${list.join(', ')}.`,
        ),
      );
      return;
    }
    next(new NotFoundError(`No route for ${req.method} ${req.path}`));
  };
}

/** The MCP gateway's endpoints (`/mcp`, `/mcp/p/…`; a path or a whole URL), whose errors are JSON-RPC's. */
export const MCP_PATH = /^\/mcp(?:[/?]|$)/i;

/**
 * Starts the error answer to `error` on `surface`: rendered through the error table (Express and
 * body-parser HTTP errors that did not pass through Plaza's wrappers, such as URI errors, are
 * normalised first), logged (5xx at error with the stack, the rest at debug), its headers set.
 * Returns the status and body still to send, or undefined when the answer had already started (a
 * stream), which is then destroyed: all that can be done.
 */
export function startErrorAnswer(
  error: unknown,
  surface: Surface,
  requestId: string,
  res: ServerResponse,
  log: Logger,
): ErrorResponse | undefined {
  const rendered = renderError(normaliseError(error), surface, requestId);
  if (rendered.status >= 500) log.error({ err: error, request_id: requestId }, 'request failed');
  else log.debug({ err: error, request_id: requestId }, 'request rejected');
  if (res.headersSent) {
    res.destroy();
    return undefined;
  }
  for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
  return rendered;
}

/**
 * The one final error handler: maps any thrown value through the error table. 5xx are logged with
 * their stack (logs only); bodies never carry stacks or internals.
 */
export function errorHandler(log: Logger) {
  // Express recognises error handlers by their four parameters, hence the unused `_next`.
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const requestId = req.requestId ?? 'unknown';
    const rendered = startErrorAnswer(error, surfaceOf(req.path), requestId, res, log);
    if (!rendered) return;
    if (MCP_PATH.test(req.path)) {
      // The gateway's endpoints answer in JSON-RPC's shape, whoever refused the request.
      const code = rendered.status >= 500 ? -32603 : rendered.status === 401 ? -32001 : -32600;
      // Sent as text: res.json would add the website's request_id, which no JSON-RPC message has.
      res
        .status(rendered.status)
        .type('application/json')
        .send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message: rendered.body['message'] } }));
      return;
    }
    res.status(rendered.status).json(rendered.body);
  };
}

/** A framework's 4xx (body-parser, serve-static) as the PlazaError it means; other values as they are. */
export function normaliseError(error: unknown): unknown {
  if (error instanceof PlazaError) return error;
  const status =
    (error as { status?: unknown; statusCode?: unknown } | null)?.status ??
    (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return new NotFoundError('Not found', { cause: error });
    // body-parser answers 413 for a form with too many fields too: that is no size problem.
    if ((error as { type?: unknown }).type === 'parameters.too.many')
      return new ValidationError('The form has too many fields.', { cause: error });
    if (status === 413) return new PlazaError('payload_too_large', 'Request body is too large.', { cause: error });
    if (status === 415) return new PlazaError('unsupported_media_type', 'Unsupported content type.', { cause: error });
    // Express could not decode a path parameter (`%ff`).
    if (error instanceof URIError || /^Failed to decode param/.test(String((error as { message?: unknown }).message))) {
      return new PlazaError('bad_request', 'The path holds a malformed percent-encoding.', { cause: error });
    }
    return new PlazaError('bad_request', 'Bad request.', { cause: error });
  }
  return error;
}
