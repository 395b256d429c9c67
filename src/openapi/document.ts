import { z } from 'zod';

/** A named schema of the document: requests are described as input, responses as output. */
export interface ComponentSpec {
  schema: z.ZodType;
  io: 'input' | 'output';
}

/** A response header of an operation. */
export interface HeaderSpec {
  description: string;
  schema: { type: 'string' | 'integer' };
}

/** One documented response. */
export interface ResponseSpec {
  description: string;
  /** Name of a component in `components`; omitted for bodiless answers (304). */
  component?: string;
  headers?: Record<string, HeaderSpec>;
}

/** A query, header or path parameter. */
export interface ParameterSpec {
  name: string;
  in: 'query' | 'header' | 'path';
  /** Path parameters are always required. */
  required?: boolean;
  description: string;
  schema: Record<string, unknown>;
}

/** One operation (method + path) of the API. */
export interface OperationSpec {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: ParameterSpec[];
  /** Name of the request body component (sent as application/json). */
  requestBody?: string;
  /** Security requirements (names of `securitySchemes`); default none (a public route). */
  security?: Record<string, string[]>[];
  responses: Record<string, ResponseSpec>;
}

/** What an OpenAPI document is built from. */
export interface OpenApiOptions {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  components: Record<string, ComponentSpec>;
  operations: OperationSpec[];
  /** OpenAPI security schemes the operations' `security` names. */
  securitySchemes?: Record<string, Record<string, unknown>>;
}

/** An OpenAPI 3.0 document as plain JSON. */
export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
};

/**
 * Builds an OpenAPI 3.0.3 document whose schemas are generated from the zod schemas that validate
 * requests and type responses (zod's own JSON Schema conversion, OpenAPI 3.0 dialect). Throws at
 * start-up when an operation names a component that does not exist.
 */
export function buildOpenApiDocument(options: OpenApiOptions): OpenApiDocument {
  const schemas: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(options.components)) {
    schemas[name] = z.toJSONSchema(spec.schema, { target: 'openapi-3.0', io: spec.io, unrepresentable: 'throw' });
  }
  const ref = (name: string) => {
    if (!(name in schemas)) throw new Error(`OpenAPI: unknown component ${name}`);
    return { $ref: `#/components/schemas/${name}` };
  };
  const paths: OpenApiDocument['paths'] = {};
  for (const op of options.operations) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(op.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.headers ? { headers: response.headers } : {}),
        ...(response.component ? { content: { 'application/json': { schema: ref(response.component) } } } : {}),
      };
    }
    paths[op.path] = {
      ...paths[op.path],
      [op.method]: {
        operationId: op.operationId,
        summary: op.summary,
        ...(op.description ? { description: op.description } : {}),
        tags: op.tags,
        security: op.security ?? [],
        ...(op.parameters?.length ? { parameters: op.parameters } : {}),
        ...(op.requestBody
          ? { requestBody: { required: true, content: { 'application/json': { schema: ref(op.requestBody) } } } }
          : {}),
        responses,
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: options.serverUrl }],
    paths,
    components: { schemas, ...(options.securitySchemes ? { securitySchemes: options.securitySchemes } : {}) },
  };
}
