import { createSseParser as createEventStreamParser } from '../../src/kernel/index.ts';

/** One server-sent event (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export interface SseEvent {
  /** The `event:` field; "message" when absent. */
  event: string;
  data: string;
  /** The last `id:` seen on the stream, if any. */
  id: string | undefined;
}

/** An incremental event-stream parser: feed decoded text as it arrives, get whole events back. */
export interface SseParser {
  push(text: string): SseEvent[];
}

/**
 * Parses `text/event-stream` as the HTML standard describes, on the kernel's parser (line ends,
 * byte-order mark, fields) with the standard's dispatch rules on top: the event name defaults to
 * "message"; an event without data is not dispatched; the last `id:` carries over to later events
 * and an id holding a NUL is ignored; comments and `retry:` are skipped; an event cut off by the
 * end of the stream is never dispatched (the caller just stops pushing). One difference from the
 * standard, which no server makes matter: an event with two ids, the last holding a NUL, leaves
 * the last id as it was before that event, where the standard takes the event's first id.
 */
export function createSseParser(): SseParser {
  const events = createEventStreamParser();
  let lastId: string | undefined;
  return {
    push(text) {
      const out: SseEvent[] = [];
      for (const event of events.push(text)) {
        if (event.id !== undefined && !event.id.includes('\0')) lastId = event.id;
        if (event.data === undefined) continue;
        out.push({ event: event.event || 'message', data: event.data, id: lastId });
      }
      return out;
    },
  };
}
