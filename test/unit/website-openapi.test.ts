/**
 * Pins the generated website contract: the document passes a real OpenAPI 3.0 validator
 * (@seriousme/openapi-schema-validator), documents every §4.6 route with its error answers, and its
 * request schemas are the same rules the routes enforce.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';

import { buildOpenApiDocument } from '../../src/openapi/index.ts';
import { websiteOpenApiOptions } from '../../src/website/index.ts';

const document = buildOpenApiDocument(websiteOpenApiOptions({ serverUrl: 'https://plaza.example', version: '1.0.0' }));
const operation = (path: string, method: string) => (document.paths[path] as Record<string, any>)[method];

describe('website OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.0');
  });

  it('covers every public website route', () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/api/agent/intent',
      '/api/leads',
      '/api/manifesto',
      '/api/plans',
      '/api/products',
      '/api/scenarios',
      '/health',
    ]);
  });

  it.each([
    ['/api/agent/intent', ['200', '400', '429', '500']],
    ['/api/leads', ['201', '400', '429', '500']],
  ])('documents the success and §7 error answers of POST %s', (path, statuses) => {
    const op = operation(path, 'post');
    expect(Object.keys(op.responses).sort()).toEqual(statuses);
    expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    expect(op.security).toEqual([]);
  });

  it('carries the request rules: strict bodies, prompt length, e-mail and scenario', () => {
    const schemas = (document['components'] as any).schemas;
    expect(schemas.IntentRequest).toMatchObject({
      additionalProperties: false,
      required: ['prompt'],
      properties: { prompt: { maxLength: 2000, minLength: 1 } },
    });
    expect(schemas.LeadRequest).toMatchObject({
      additionalProperties: false,
      required: ['email', 'scenario'],
      properties: { email: { format: 'email' }, scenario: { enum: ['enterprise', 'commerce', 'developer', 'growth'] } },
    });
    expect(schemas.PlansResponse.properties.plans.items.required).toEqual([
      'id',
      'name',
      'priceCents',
      'currency',
      'features',
      'action',
      'checkoutUrl',
    ]);
  });
});
