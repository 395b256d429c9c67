/**
 * An incremental Server-Sent Events parser: text goes in as it arrives, each complete event's
 * `data` (multi-line data joined with "\n") comes out as soon as its terminating blank line is
 * seen; comments and other fields are skipped. Nothing is buffered beyond the event being read.
 */
export class SseParser {
  /** Text after the last complete line (and a trailing "\r" that may be half of "\r\n"). */
  #rest = '';
  #data: string[] = [];

  /** Feeds `text`; the data of every event it completes is appended to `out`. */
  push(text: string, out: string[]): void {
    let s = this.#rest === '' ? text : this.#rest + text;
    let tail = '';
    if (s.includes('\r')) {
      // A lone "\r" at the end may be the first half of "\r\n": keep it for the next bytes.
      if (s.endsWith('\r')) {
        tail = '\r';
        s = s.slice(0, -1);
      }
      s = s.replace(/\r\n?/g, '\n');
    }
    let start = 0;
    let newline: number;
    while ((newline = s.indexOf('\n', start)) >= 0) {
      if (newline === start) {
        if (this.#data.length > 0) {
          out.push(this.#data.length === 1 ? this.#data[0]! : this.#data.join('\n'));
          this.#data = [];
        }
      } else if (s.startsWith('data:', start)) {
        this.#data.push(s.slice(start + (s.charCodeAt(start + 5) === 32 ? 6 : 5), newline));
      }
      start = newline + 1;
    }
    this.#rest = (start === 0 ? s : s.slice(start)) + tail;
  }

  /** The end of the body: an event still missing its blank line is dispatched. */
  end(out: string[]): void {
    this.push('\n', out);
    if (this.#data.length > 0) out.push(this.#data.join('\n'));
    this.#data = [];
    this.#rest = '';
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

/** One SSE event carrying `data` (which must not contain newlines; JSON text never does). */
export function sseEvent(data: string): string {
  return `data: ${data}\n\n`;
}
