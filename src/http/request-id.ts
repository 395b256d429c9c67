import type { Express, NextFunction, Request, Response } from 'express';

import { isWellFormedRequestId, newRequestId } from '../kernel/index.ts';

declare module 'express-serve-static-core' {
  interface Request {
    /** This request's id: the caller's `X-Request-Id` when well-formed, else a new one. */
    requestId: string;
  }
}

/**
 * Gives every request of `app` an id, echoes it in `X-Request-Id`, and adds `request_id` to every
 * JSON object body sent with `res.json` so no route can forget it. The `res.json` of the app's own
 * response prototype is replaced once, rather than a wrapper bound on every request.
 */
export function requestId(app: Express) {
  const json = app.response.json;
  app.response.json = function jsonWithRequestId(this: Response, body?: unknown) {
    const id = this.req.requestId;
    if (
      id !== undefined &&
      body !== null &&
      typeof body === 'object' &&
      !Array.isArray(body) &&
      !('request_id' in body)
    ) {
      return json.call(this, { ...(body as Record<string, unknown>), request_id: id });
    }
    return json.call(this, body);
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    req.requestId = isWellFormedRequestId(given) ? given : newRequestId();
    res.setHeader('X-Request-Id', req.requestId);
    next();
  };
}
