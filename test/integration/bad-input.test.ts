/**
 * Sends a batch of malformed requests to every route the app has (found by walking Express's
 * router, so new routes are covered automatically) and checks each answer is a JSON 4xx in a known
 * error shape: never a 5xx, never HTML, and the process keeps serving.
 */
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createPlaza } from '../../src/app/create-app.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

interface RouteInfo {
  path: string;
  methods: string[];
}

/** Every concrete route of the app, params filled with a placeholder. */
function listRoutes(app: Express): RouteInfo[] {
  const out: RouteInfo[] = [];
  const walk = (stack: unknown[]) => {
    for (const layer of stack as {
      route?: { path: unknown; methods: Record<string, boolean> };
      handle?: { stack?: unknown[] };
    }[]) {
      if (layer.route && typeof layer.route.path === 'string') {
        out.push({
          path: layer.route.path.replace(/:[A-Za-z_]+/g, 'x').replace(/\*.*$/, 'x'),
          methods: Object.keys(layer.route.methods)
            .map((m) => m.toUpperCase())
            .filter((m) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(m)),
        });
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: unknown[] } }).router.stack);
  return out;
}

const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
const BODIES: [string, string, string][] = [
  ['malformed JSON', 'application/json', '{"a": '],
  ['wrong content type', 'text/plain', 'hello'],
  ['form body', 'application/x-www-form-urlencoded', 'a=1&b=2'],
  ['JSON null', 'application/json', 'null'],
  ['JSON array', 'application/json', '[1,2,3]'],
  ['JSON string', 'application/json', '"str"'],
  ['unknown fields', 'application/json', '{"__unknown_field__": true, "constructor": {"prototype": {"polluted": 1}}}'],
  ['wrong types', 'application/json', '{"prompt": 42, "email": [], "messages": "x", "url": {"a": 1}}'],
  ['deep nesting', 'application/json', deep],
  ['oversized', 'application/json', JSON.stringify({ x: 'y'.repeat(2 * 1024 * 1024) })],
  ['invalid UTF-8', 'application/json; charset=utf-8', '{"a":"\udc80"}'],
  ['unsupported charset', 'application/json; charset=latin9', '{}'],
];

describe('bad input on every route', () => {
  let plaza: TestPlaza;
  let routes: RouteInfo[];

  beforeAll(async () => {
    plaza = await startTestPlaza('pglite');
    const composed = createPlaza({ config: plaza.config, db: plaza.db, log: plaza.log });
    routes = listRoutes(composed.app);
    await composed.close();
  });
  afterAll(async () => {
    await plaza?.close();
  });

  it('finds the routes to attack', () => {
    expect(routes.map((r) => r.path)).toContain('/health');
  });

  it('never answers 5xx or non-JSON to malformed requests', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      for (const method of new Set([...route.methods.filter((m) => m !== 'HEAD'), 'POST', 'DELETE'])) {
        for (const [label, type, body] of method === 'GET'
          ? [['no body', '', ''] as [string, string, string]]
          : BODIES) {
          const headers: Record<string, string> = type ? { 'content-type': type } : {};
          headers['authorization'] = 'Bearer garbage';
          const res = await fetch(`${plaza.url}${route.path}`, {
            method,
            headers,
            body: method === 'GET' ? undefined : body,
          });
          const text = await res.text();
          const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json');
          if (res.status >= 500 || (res.status >= 400 && !isJson))
            failures.push(`${method} ${route.path} [${label}] -> ${res.status} ${text.slice(0, 120)}`);
          if (res.status >= 400 && isJson) {
            const parsed = JSON.parse(text) as {
              success?: unknown;
              code?: unknown;
              request_id?: unknown;
              jsonrpc?: unknown;
            };
            if (
              parsed.jsonrpc === undefined &&
              (parsed.success !== false || typeof parsed.code !== 'string' || typeof parsed.request_id !== 'string')
            ) {
              failures.push(
                `${method} ${route.path} [${label}] -> ${res.status} unexpected error shape ${text.slice(0, 120)}`,
              );
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect((await fetch(`${plaza.url}/health`)).status).toBe(200);
  }, 120_000);
});
