import type {
  ComponentSpec,
  HeaderSpec,
  OpenApiOptions,
  OperationSpec,
  ParameterSpec,
  ResponseSpec,
} from '../openapi/index.ts';
import {
  HealthResponseSchema,
  IntentRequestSchema,
  IntentResponseSchema,
  LeadRequestSchema,
  LeadResponseSchema,
  LOCALES,
  ManifestoResponseSchema,
  PlansResponseSchema,
  ProductsResponseSchema,
  PROMPT_MAX_CHARS,
  ScenariosResponseSchema,
  WebsiteErrorSchema,
} from './schemas.ts';

const components: Record<string, ComponentSpec> = {
  HealthResponse: { schema: HealthResponseSchema, io: 'output' },
  ProductsResponse: { schema: ProductsResponseSchema, io: 'output' },
  ScenariosResponse: { schema: ScenariosResponseSchema, io: 'output' },
  PlansResponse: { schema: PlansResponseSchema, io: 'output' },
  ManifestoResponse: { schema: ManifestoResponseSchema, io: 'output' },
  IntentRequest: { schema: IntentRequestSchema, io: 'input' },
  IntentResponse: { schema: IntentResponseSchema, io: 'output' },
  LeadRequest: { schema: LeadRequestSchema, io: 'input' },
  LeadResponse: { schema: LeadResponseSchema, io: 'output' },
  Error: { schema: WebsiteErrorSchema, io: 'output' },
};

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;

const localeParameters: ParameterSpec[] = [
  {
    name: 'locale',
    in: 'query',
    description: `Answer locale (${LOCALES.join(', ')}; a primary language such as zh also matches). Wins over Accept-Language; unsupported values fall back.`,
    schema: { type: 'string', example: 'zh-CN' },
  },
  {
    name: 'Accept-Language',
    in: 'header',
    description: 'Used when no locale query is given; falls back to en.',
    schema: { type: 'string' },
  },
];

const rateLimitHeaders: Record<string, HeaderSpec> = {
  'RateLimit-Policy': {
    description: 'IETF draft RateLimit-Policy, e.g. `"intent";q=30;w=60` (quota per window of w seconds).',
    schema: str,
  },
  RateLimit: {
    description: 'IETF draft RateLimit, e.g. `"intent";r=29;t=41` (remaining, seconds to reset).',
    schema: str,
  },
  'X-Request-Id': { description: 'The request id.', schema: str },
};

const serverError: ResponseSpec = {
  description: 'Server error: retry with backoff and report request_id to support.',
  component: 'Error',
};

function catalogOperation(path: string, operationId: string, summary: string, component: string): OperationSpec {
  return {
    method: 'get',
    path,
    operationId,
    summary,
    tags: ['catalog'],
    parameters: [
      ...localeParameters,
      {
        name: 'If-None-Match',
        in: 'header',
        description: 'A previous ETag: 304 when unchanged.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: 'The catalog in the negotiated locale (cacheable; varies by Accept-Language).',
        component,
        headers: {
          ETag: { description: 'Content tag (independent of request_id).', schema: str },
          'Cache-Control': { description: 'public, max-age=300', schema: str },
          'Content-Language': { description: 'The locale served.', schema: str },
        },
      },
      '304': {
        description: 'Not modified (If-None-Match matched).',
        headers: { ETag: { description: 'Content tag.', schema: str } },
      },
      '500': serverError,
    },
  };
}

const operations: OperationSpec[] = [
  {
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Service health (spec §2.14)',
    tags: ['health'],
    responses: {
      '200': { description: 'Plaza and its database are up.', component: 'HealthResponse' },
      '503': { description: 'The database is not reachable.', component: 'HealthResponse' },
    },
  },
  catalogOperation('/api/products', 'listProducts', 'Products (spec §2.11)', 'ProductsResponse'),
  catalogOperation(
    '/api/scenarios',
    'listScenarios',
    'Scenarios with their products and plan (spec §2.11)',
    'ScenariosResponse',
  ),
  catalogOperation('/api/plans', 'listPlans', 'Plans and prices (spec §2.11)', 'PlansResponse'),
  catalogOperation('/api/manifesto', 'getManifesto', 'The manifesto (spec §4.6)', 'ManifestoResponse'),
  {
    method: 'post',
    path: '/api/agent/intent',
    operationId: 'recommendForIntent',
    summary: 'Recommend a scenario, products and plan for a prompt (spec §2.12)',
    description: `Classifies the prompt (English, Chinese or mixed) onto one of the four scenarios. Rate limited per client. The prompt is 1–${PROMPT_MAX_CHARS} characters; unknown fields are rejected.`,
    tags: ['intent'],
    parameters: localeParameters,
    requestBody: 'IntentRequest',
    responses: {
      '200': { description: 'The recommendation.', component: 'IntentResponse', headers: rateLimitHeaders },
      '400': {
        description:
          '`invalid_prompt`: prompt missing, blank, not a string, too long, unknown fields, or the body is not valid JSON.',
        component: 'Error',
      },
      '429': {
        description: '`rate_limited`: too many requests from this client.',
        component: 'Error',
        headers: {
          ...rateLimitHeaders,
          'Retry-After': { description: 'Seconds until a retry can succeed.', schema: int },
        },
      },
      '500': serverError,
    },
  },
  {
    method: 'post',
    path: '/api/leads',
    operationId: 'submitLead',
    summary: 'Leave a lead (spec §2.13)',
    description:
      'Stores a lead. A stored lead is never changed: a later one with the same e-mail and scenario is stored beside it, and an identical repeat within 24 hours is not stored twice; the answer is the same either way. A lead opens no paid plan. Rate limited per client.',
    tags: ['leads'],
    parameters: localeParameters,
    requestBody: 'LeadRequest',
    responses: {
      '201': {
        description: 'The lead was received (stored, or already stored by an identical repeat).',
        component: 'LeadResponse',
        headers: rateLimitHeaders,
      },
      '400': {
        description:
          '`invalid_lead`: bad e-mail, unknown scenario, oversize or unknown fields, or the body is not valid JSON.',
        component: 'Error',
      },
      '429': {
        description: '`rate_limited`: too many requests from this client.',
        component: 'Error',
        headers: {
          ...rateLimitHeaders,
          'Retry-After': { description: 'Seconds until a retry can succeed.', schema: int },
        },
      },
      '500': serverError,
    },
  },
];

/** The public website's OpenAPI description (spec §4.5 `/openapi.json`, §9: OpenAPI 3.0). */
export function websiteOpenApiOptions(options: { serverUrl: string; version: string }): OpenApiOptions {
  return {
    title: 'Plaza public website API',
    version: options.version,
    description:
      'Anonymous marketing API of Plaza: health, catalog (products, scenarios, plans, manifesto), intent recommendation and lead capture. Send no API key or Bearer token. Errors are `{success:false, code, message, request_id}`.',
    serverUrl: options.serverUrl,
    components,
    operations,
  };
}
