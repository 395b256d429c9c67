import { createLineSplitter } from '../../src/kernel/index.ts';

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
 * Parses `text/event-stream` as the HTML standard describes: lines end in CRLF, LF or CR; a blank
 * line dispatches the event; `data:` lines join with "\n"; comments and `retry:` are skipped; an
 * event cut off by the end of the stream is never dispatched (the caller just stops pushing).
 */
export function createSseParser(): SseParser {
  const lines = createLineSplitter();
  let first = true;
  let data: string[] = [];
  let event = '';
  let lastId: string | undefined;

  function line(text: string, out: SseEvent[]): void {
    if (text === '') {
      if (data.length > 0) out.push({ event: event === '' ? 'message' : event, data: data.join('\n'), id: lastId });
      data = [];
      event = '';
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
  }

  return {
    push(text) {
      const out: SseEvent[] = [];
      if (text === '') return out;
      if (first) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
      }
      for (const l of lines.push(text)) line(l, out);
      return out;
    },
  };
}
