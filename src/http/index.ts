/** The HTTP edge shared by every surface: request ids, JSON bodies, the error table and handler. */
export { readCookie } from './cookies.ts';
export { drainedOrClosed } from './drain.ts';
export { errorHandler, MCP_PATH, normaliseError, notFound, startErrorAnswer } from './error-handler.ts';
export type { ErrorResponse, ErrorRow, Surface } from './error-table.ts';
export { ERROR_TABLE, renderError, surfaceOf } from './error-table.ts';
export { answerEtag } from './etag.ts';
export { bodyFailure, hasBody, isPlainJsonRequest, jsonBody, readPlainJson } from './json-body.ts';
export { hasNulEscape, refuseNulInJson } from './nul.ts';
export { requestId } from './request-id.ts';
export { apiSecurityHeaders, isApiPath, staticHeaders } from './static-headers.ts';
