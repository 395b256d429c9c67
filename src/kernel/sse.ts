import { createLineSplitter, type LineSplitter, LineTooLongError } from './text.ts';

/**
 * One event of a `text/event-stream` as it was sent: each field present only when the event had
 * it, so an event can be passed on as it came ({@link formatSseEvent}).
 */
export interface SseEvent {
  /** The last `event:` field's value. */
  event?: string;
  /** The last `id:` field's value, as sent (a NUL in it is the reader's to judge). */
  id?: string;
  /** The last `retry:` field's value, unchecked. */
  retry?: string;
  /** The `data:` lines joined with "\n". */
  data?: string;
  /** Comment lines (": …") without their colon, kept so keep-alives can be passed on. */
  comments?: string[];
}

/** An event (or one of its lines) longer than a parser's `maxEventLength`. */
export class SseEventTooLargeError extends Error {
  constructor(limit: number) {
    super(`an event of the stream exceeds ${limit} characters`);
    this.name = 'SseEventTooLargeError';
  }
}

/** See {@link createSseParser}. */
export interface SseParser {
  /** Feeds decoded text as it arrives; the events it completed are appended to `out` (a new array by default), which is returned. */
  push(text: string, out?: SseEvent[]): SseEvent[];
  /** The end of the stream: an event still missing its blank line is completed too. */
  end(out?: SseEvent[]): SseEvent[];
}

/**
 * An incremental `text/event-stream` parser, the one every module reads event streams with. Lines
 * end in CRLF, LF or CR, even cut between chunks (the kernel's line splitter, linear however the
 * text is chunked); a leading byte-order mark is dropped; a field without a colon has an empty
 * value and one space after the colon is stripped; a blank line completes an event that had any
 * line at all (a comment alone makes one, so keep-alives can be relayed), and so does the end of
 * the stream. None of the HTML standard's dispatch rules is applied here — no "message" default,
 * no dropping of events without data, no last id carried over, no check of ids or retry: readers
 * that want them apply them on top. With `maxEventLength`, a line, or an event's data and comments
 * together, past it throws {@link SseEventTooLargeError} rather than being held.
 */
export function createSseParser(options: { maxEventLength?: number } = {}): SseParser {
  return new EventStreamParser(options.maxEventLength ?? Number.POSITIVE_INFINITY);
}

// A class, not closures: a chat completion creates one, and this is the chat lane's hot path.
class EventStreamParser implements SseParser {
  readonly #limit: number;
  readonly #lines: LineSplitter;
  #started = false;
  /** The event being read; undefined until a line of it arrives. */
  #current: SseEvent | undefined;
  /** Characters of data and comments the current event holds. */
  #held = 0;

  constructor(limit: number) {
    this.#limit = limit;
    this.#lines = createLineSplitter({ maxLineLength: limit });
  }

  push(text: string, out: SseEvent[] = []): SseEvent[] {
    if (!this.#started && text !== '') {
      this.#started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let lines: string[];
    try {
      lines = this.#lines.push(text);
    } catch (error) {
      throw error instanceof LineTooLongError ? new SseEventTooLargeError(this.#limit) : error;
    }
    for (let i = 0; i < lines.length; i++) this.#line(lines[i]!, out);
    return out;
  }

  end(out: SseEvent[] = []): SseEvent[] {
    const rest = this.#lines.end();
    if (rest !== undefined) this.#line(rest, out);
    this.#line('', out);
    return out;
  }

  #line(text: string, out: SseEvent[]): void {
    if (text === '') {
      if (this.#current !== undefined) {
        out.push(this.#current);
        this.#current = undefined;
      }
      this.#held = 0;
      return;
    }
    const colon = text.indexOf(':');
    if (colon === 0) {
      this.#hold(text.length);
      ((this.#current ??= {}).comments ??= []).push(text.slice(1));
      return;
    }
    const value = colon === -1 ? '' : text.slice(text.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    // The field's name is compared where it is, not copied out; `data` first: nearly every line.
    const name = colon === -1 ? text.length : colon;
    if (name === 4 && text.startsWith('data')) {
      this.#hold(value.length + 1);
      const event = this.#current;
      // An event of one data line, nearly all of them, is made whole at once.
      if (event === undefined) this.#current = { data: value };
      else event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      return;
    }
    // Any other line, an unknown field too, still makes an event (as the gateway relays them).
    const event = (this.#current ??= {});
    if (name === 5 && text.startsWith('event')) event.event = value;
    else if (name === 2 && text.startsWith('id')) event.id = value;
    else if (name === 5 && text.startsWith('retry')) event.retry = value;
  }

  #hold(chars: number): void {
    this.#held += chars;
    if (this.#held > this.#limit) throw new SseEventTooLargeError(this.#limit);
  }
}

/** Serialises an event back to the wire, fields in a fixed order, data one `data:` line per line. */
export function formatSseEvent(event: SseEvent): string {
  let out = '';
  for (const comment of event.comments ?? []) out += `:${comment}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.retry !== undefined) out += `retry: ${event.retry}\n`;
  if (event.data !== undefined) for (const part of event.data.split('\n')) out += `data: ${part}\n`;
  return `${out}\n`;
}
