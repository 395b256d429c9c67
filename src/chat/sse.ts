import { createSseParser, type SseEvent } from '../kernel/index.ts';

/** Longest event (and line) an upstream may send: chunks are small; 4 MiB is no chunk. */
const MAX_SSE_EVENT_CHARS = 4 * 1024 * 1024;

/**
 * An incremental Server-Sent Events parser for model backends' streams: text goes in as it
 * arrives, each complete event's `data` (multi-line data joined with "\n") comes out as soon as
 * its terminating blank line is seen; events without data (keep-alive comments) are skipped. The
 * kernel's parser reads the stream; an event or line past MAX_SSE_EVENT_CHARS throws its
 * SseEventTooLargeError rather than being held.
 */
export class SseParser {
  readonly #events = createSseParser({ maxEventLength: MAX_SSE_EVENT_CHARS });
  /** The kernel parser's output: a new array only once an event filled the last one. */
  #completed: SseEvent[] = [];

  /** Feeds `text`; the data of every event it completes is appended to `out`. */
  push(text: string, out: string[]): void {
    this.#take(this.#events.push(text, this.#completed), out);
  }

  /** The end of the body: an event still missing its blank line is dispatched. */
  end(out: string[]): void {
    this.#take(this.#events.end(this.#completed), out);
  }

  #take(events: SseEvent[], out: string[]): void {
    if (events.length === 0) return;
    for (let i = 0; i < events.length; i++) {
      const data = events[i]!.data;
      if (data !== undefined) out.push(data);
    }
    this.#completed = [];
  }
}

/**
 * Reads a Server-Sent Events body and yields each event's `data` as soon as the event's
 * terminating blank line arrives (see {@link SseParser}).
 */
export async function* readSseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const out: string[] = [];
  for await (const bytes of body) {
    parser.push(decoder.decode(bytes, { stream: true }), out);
    if (out.length > 0) {
      yield* out;
      out.length = 0;
    }
  }
  parser.push(decoder.decode(), out);
  parser.end(out);
  yield* out;
}

/**
 * One SSE event carrying `data`: a `data:` field per line, so multi-line data (an upstream's
 * pretty-printed JSON) reaches the client whole and cannot start fields of its own.
 */
export function sseEvent(data: string): string {
  if (!data.includes('\n') && !data.includes('\r')) return `data: ${data}\n\n`;
  return `${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('')}\n`;
}
