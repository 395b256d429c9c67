import { createLineSplitter, LineTooLongError } from '../kernel/index.ts';

/** Longest event `data` (and line) an upstream may send: chunks are small; 4 MiB is no chunk. */
const MAX_SSE_EVENT_CHARS = 4 * 1024 * 1024;

/** An upstream event larger than {@link MAX_SSE_EVENT_CHARS}. */
class SseEventTooLargeError extends Error {
  constructor() {
    super(`an upstream event exceeds ${MAX_SSE_EVENT_CHARS} characters`);
    this.name = 'SseEventTooLargeError';
  }
}

/**
 * An incremental Server-Sent Events parser: text goes in as it arrives, each complete event's
 * `data` (multi-line data joined with "\n") comes out as soon as its terminating blank line is
 * seen; comments and other fields are skipped. Linear however the text is chunked (the lines come
 * from the kernel's splitter); an event or line past MAX_SSE_EVENT_CHARS throws
 * SseEventTooLargeError rather than being held.
 */
export class SseParser {
  readonly #lines = createLineSplitter({ maxLineLength: MAX_SSE_EVENT_CHARS });
  #data: string[] = [];
  #size = 0;

  /** Feeds `text`; the data of every event it completes is appended to `out`. */
  push(text: string, out: string[]): void {
    let lines: string[];
    try {
      lines = this.#lines.push(text);
    } catch (error) {
      if (error instanceof LineTooLongError) throw new SseEventTooLargeError();
      throw error;
    }
    for (const line of lines) this.#line(line, out);
  }

  /** The end of the body: an event still missing its blank line is dispatched. */
  end(out: string[]): void {
    const rest = this.#lines.end();
    if (rest !== undefined) this.#line(rest, out);
    this.#dispatch(out);
  }

  #line(line: string, out: string[]): void {
    if (line === '') {
      this.#dispatch(out);
      return;
    }
    if (!line.startsWith('data:')) return;
    const value = line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
    this.#size += value.length + 1;
    if (this.#size > MAX_SSE_EVENT_CHARS) throw new SseEventTooLargeError();
    this.#data.push(value);
  }

  #dispatch(out: string[]): void {
    if (this.#data.length > 0) out.push(this.#data.length === 1 ? this.#data[0]! : this.#data.join('\n'));
    this.#data = [];
    this.#size = 0;
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
