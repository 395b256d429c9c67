/**
 * Reading the gateway's JSON-RPC answers as a raw HTTP client sees them: an `application/json` body,
 * or a `text/event-stream` whose `data:` lines each carry one message (notifications and requests
 * to the client among them, the answer last).
 */

/** The JSON-RPC messages of an event stream's text, in order (empty `data:` lines left out). */
export function sseMessages(text: string): any[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data:') && line.slice(5).trim() !== '')
    .map((line) => JSON.parse(line.slice(5)));
}

/**
 * The answer in a body of `contentType`: a JSON body parsed as it is; of an event stream, the
 * message with `id` (without `id`, the first that has one).
 */
export function answerIn(text: string, contentType: string | null | undefined, id?: unknown): any {
  if (!(contentType ?? '').includes('text/event-stream')) return JSON.parse(text);
  return sseMessages(text).find((m) => (id === undefined ? m.id !== undefined : m.id === id));
}

/** The answer in `res` (see {@link answerIn}); reads its body. */
export async function answerOf(res: Response, id?: unknown): Promise<any> {
  return answerIn(await res.text(), res.headers.get('content-type'), id);
}

/**
 * POSTs `body` (JSON) to a gateway endpoint as the agent holding `token`, accepting JSON or an event
 * stream; `headers` add to or replace those.
 */
export function postMcp(url: string, token: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}
