/** OpenAPI 3.0 documents generated from zod schemas, and the route that serves them. */
export type {
  ComponentSpec,
  HeaderSpec,
  OpenApiDocument,
  OpenApiOptions,
  OperationSpec,
  ParameterSpec,
  ResponseSpec,
} from './document.ts';
export { buildOpenApiDocument } from './document.ts';
export { openApiRoutes } from './routes.ts';
