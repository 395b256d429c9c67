/**
 * How the passthrough answers while Plaza cannot read its database: kept apart from the handler
 * because it is the one answer that needs no agent, connector or session, only the request body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { GATEWAY_ERROR_TABLE, GatewayError, gatewayErrorHeaders, sendGatewayError } from '../error-table.ts';
import { parseJson, storageUnavailable } from '../internal/json-rpc.ts';
import { readRequestText } from '../internal/request-text.ts';
import { sendJson } from '../internal/send-json.ts';

/**
 * Answers a request while Plaza cannot read its database: 503 under the ids of the requests a
 * POST holds (storageUnavailable), once its body is read; a body that cannot be read or parsed
 * is answered as such, as it would be otherwise.
 */
export async function refuseForStorage(req: IncomingMessage, res: ServerResponse, maxRequest: number): Promise<void> {
  let body: unknown;
  if (req.method === 'POST') {
    let text: string;
    try {
      text = await readRequestText(req, maxRequest);
    } catch (error) {
      // readRequestText throws only GatewayError: 413 (the rest unread), 400 cut short or not UTF-8.
      sendGatewayError(res, error as GatewayError);
      return;
    }
    try {
      body = parseJson(text);
    } catch {
      sendGatewayError(res, new GatewayError('parse_error', 'Request body is not valid JSON.'));
      return;
    }
  }
  sendJson(
    res,
    GATEWAY_ERROR_TABLE.storage_unavailable.status,
    storageUnavailable(body),
    gatewayErrorHeaders('storage_unavailable'),
  );
}
