/**
 * The routes an Express 5 app registered, read from its router stack: `METHOD /path` for every
 * route (`ALL /path` for `app.all`), `USE /path` for middleware mounted under a path (static
 * files). Mounted routers are walked with their mount path. Tests compare it with their own route
 * tables, so a new route without coverage fails a test.
 */
import { METHODS } from 'node:http';

import type { Express } from 'express';

interface Layer {
  rawPath?: string | string[];
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

function walk(stack: Layer[], prefix: string, out: Set<string>): void {
  for (const layer of stack) {
    const raw = Array.isArray(layer.rawPath) ? layer.rawPath.join('|') : layer.rawPath;
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      const methods = Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m]);
      // app.all registers every method Node knows; a Router's all() registers `_all`.
      const all = methods.length > METHODS.length / 2 || methods.includes('_all');
      for (const path of paths) {
        if (all) out.add(`ALL ${prefix}${path}`);
        else for (const method of methods) out.add(`${method.toUpperCase()} ${prefix}${path}`);
      }
    } else if (layer.handle?.stack) {
      walk(layer.handle.stack, raw === undefined || raw === '/' ? prefix : `${prefix}${raw}`, out);
    } else if (raw !== undefined && raw !== '/') {
      out.add(`USE ${prefix}${raw}`);
    }
  }
}

/** Every route of `app`, as `METHOD /path` strings. */
export function registeredRoutes(app: Express): Set<string> {
  const out = new Set<string>();
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '', out);
  return out;
}
