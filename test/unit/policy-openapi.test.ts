/**
 * Pins the agent policy routes in Plaza's OpenAPI document (what `/openapi.json` serves): the
 * merged document stays a valid OpenAPI 3.0 document, and describes each route with its bearer
 * security, its request schema (the one that validates bodies) and its token-shaped errors.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';

import { withPolicyRoutes } from '../../src/app/create-app.ts';
import { buildOpenApiDocument } from '../../src/openapi/index.ts';
import { websiteOpenApiOptions } from '../../src/website/index.ts';

const document = buildOpenApiDocument(
  withPolicyRoutes(websiteOpenApiOptions({ serverUrl: 'https://plaza.example', version: '1.0.0' })),
);
const paths = document.paths as Record<string, Record<string, any>>;

describe('the agent policy routes in the OpenAPI document', () => {
  it('leave it a valid OpenAPI 3.0 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it.each([
    ['/api/agents/{id}/policy', ['delete', 'get', 'put']],
    ['/api/account/agent-policy', ['get', 'put']],
  ])('describe %s with bearer security and token-shaped errors', (path, methods) => {
    expect(Object.keys(paths[path]!).sort()).toEqual(methods);
    for (const method of methods) {
      const op = paths[path]![method];
      expect(op.security).toEqual([{ bearer: [] }]);
      expect(op.responses['401'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/TokenError',
      });
      if (method === 'put') expect(Object.keys(op.responses)).toContain('400');
    }
    expect(paths['/api/agents/{id}/policy']!['get'].responses['404']).toBeDefined();
  });

  it('carries the policy rules: at most 200 rules, whole-number limits from 1, strict objects', () => {
    const schemas = (document['components'] as any).schemas;
    const request = schemas.AgentPolicyRequest;
    expect(request.additionalProperties).toBe(false);
    expect(request.properties.rules.maxItems).toBe(200);
    expect(request.properties.rules.items.required).toEqual(['effect', 'provider', 'tool']);
    expect(request.properties.limits.properties.per_day).toMatchObject({ type: 'integer', minimum: 1 });
  });
});
