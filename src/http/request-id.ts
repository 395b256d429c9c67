import type { NextFunction, Request, Response } from 'express';

import { isWellFormedRequestId, newRequestId } from '../kernel/index.ts';

declare module 'express-serve-static-core' {
  interface Request {
    /** This request's id: the caller's `X-Request-Id` when well-formed, else a new one. */
    requestId: string;
  }
}

/**
 * Gives every request an id, echoes it in `X-Request-Id`, and adds `request_id` to every JSON
 * object body sent with `res.json` so no route can forget it.
 */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.get('x-request-id');
    req.requestId = isWellFormedRequestId(given) ? given : newRequestId();
    res.setHeader('X-Request-Id', req.requestId);
    const json = res.json.bind(res);
    res.json = (body?: unknown) => {
      if (body !== null && typeof body === 'object' && !Array.isArray(body) && !('request_id' in body)) {
        return json({ ...(body as Record<string, unknown>), request_id: req.requestId });
      }
      return json(body);
    };
    next();
  };
}
