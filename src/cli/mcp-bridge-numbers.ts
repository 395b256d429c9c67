import { randomBytes } from 'node:crypto';

/**
 * Numbers as the bridge's peers wrote them. `JSON.parse` reads a number into a double: an integer
 * past 2^53 (a 64-bit id, an account number) or a decimal with more than 15 significant digits
 * comes out as another number, and a message re-serialised after it carries other digits. The
 * bridge passes messages through, both ways, with the values as written:
 *
 * - the client's lines are read with `parseLossless`: such a number is kept as its text
 *   (`JSON.rawJSON`), which `JSON.stringify` (the SDK's, sending it on) writes as it is;
 * - what the gateway answers goes through the SDK's transport, which parses it itself: the
 *   bridge's fetch hands it the text with each such number turned into a marked string
 *   (`markNumbers`, the mark is random per bridge), and `serialise` writes the digits back
 *   when the message goes to the client.
 */

/** Node's JSON beyond ES2024's typings: raw JSON text that JSON.stringify writes as it is. */
export const rawJson = JSON as unknown as {
  rawJSON(text: string): object;
  isRawJSON(value: unknown): value is { rawJSON: string };
};

/**
 * Text that may hold a number JSON.parse changes: 16 or more digits in a row (a dot among them
 * allowed), or an exponent of three digits (past the range of a double, or below it). A number
 * with 15 significant digits or fewer, within that range, is read back as written.
 */
const MAYBE_CHANGED = /\d(?:\.?\d){15}|\d[eE][+-]?\d{3}/;

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A number's text as a canonical decimal (sign, significant digits, exponent), or undefined when it is none. */
function decimal(text: string): string | undefined {
  const match = NUMBER.exec(text);
  if (!match) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let digits = (whole! + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  return `${sign}${digits}e${BigInt(exponent) - BigInt(fraction.length) + BigInt(trailing)}`;
}

/** Whether `value`, written back by JSON.stringify, is the number `source` says (1.0 is 1; 9007199254740993 is not 9007199254740992). */
export function keepsValue(source: string, value: number): boolean {
  const written = String(value);
  if (written === source) return true;
  const wanted = decimal(source);
  return wanted !== undefined && wanted === decimal(written);
}

/**
 * JSON.parse, keeping each number it would change as its text (`JSON.rawJSON`). Text that cannot
 * hold such a number is parsed as it is (no reviver: as fast as JSON.parse).
 */
export function parseLossless(text: string): unknown {
  if (!MAYBE_CHANGED.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && !keepsValue(context.source, value)
      ? rawJson.rawJSON(context.source)
      : value,
  );
}

/** Marks a number JSON.parse would change, as a string; random per bridge, so no peer's string is taken for one. */
const MARK = `\u0000plaza-number-${randomBytes(8).toString('hex')}:`;
/** The mark as JSON.stringify writes it. */
const MARK_IN_JSON = JSON.stringify(MARK).slice(1, -1);

/**
 * `text` (JSON) for a parser that rounds numbers: each number JSON.parse would change becomes a
 * marked string holding its digits, which `serialise` writes back as the number. Text without
 * such a number comes back unchanged, as does text that is not JSON (its reader says so).
 */
export function markNumbers(text: string): string {
  if (!MAYBE_CHANGED.test(text)) return text;
  let marked = false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
      if (typeof value !== 'number' || context?.source === undefined || keepsValue(context.source, value)) return value;
      marked = true;
      return `${MARK}${context.source}`;
    });
  } catch {
    return text;
  }
  return marked ? JSON.stringify(parsed) : text;
}

/** `value` (a marked string) as the number it marks; anything else as it is. */
function unmark(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.startsWith(MARK) ? rawJson.rawJSON(value.slice(MARK.length)) : value;
}

/** JSON.stringify, writing marked numbers (see markNumbers) as the digits they came with. */
export function serialise(message: unknown): string {
  const text = JSON.stringify(message);
  return text.includes(MARK_IN_JSON) ? JSON.stringify(message, unmark) : text;
}

/**
 * The events of an event stream (text/event-stream), each with its JSON data passed through
 * `markNumbers`. Bytes of events that need no change pass as they came; an event that does gets
 * its data on one line. Events go on as soon as they end (at an empty line).
 *
 * Linear in the size of an event: each read is searched once for an event end (with the last few
 * characters before it, where an end may begin), and an event's pieces are joined once, when it
 * ends. (Appended to one string and searched with a regex at every read, the string was copied
 * whole at each read: a 16 MiB event took seconds, its time growing with the square of its size.)
 */
export function markEventStream(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  /** One event's text (with its line ends), marked. */
  const mark = (event: string): string => {
    const lines = event.match(/[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$/g) ?? [];
    const isData = lines.map((line) => /^data(?::|\r|\n|$)/.test(line));
    if (!isData.includes(true)) return event;
    const value = lines
      .filter((_line, i) => isData[i])
      .map((line) => line.replace(/^data:? ?/, '').replace(/(?:\r\n|\r|\n)$/, ''))
      .join('\n');
    const marked = markNumbers(value);
    if (marked === value) return event;
    let written = false;
    return lines
      .map((line, i) => {
        if (!isData[i]) return line;
        if (written) return '';
        written = true;
        return `data: ${marked}${/(?:\r\n|\r|\n)$/.exec(line)?.[0] ?? ''}`;
      })
      .join('');
  };
  // An event ends at an empty line: two line ends in a row (a CR at the very end may be half a CRLF).
  const eventEnd = /(?:\r\n|\r(?!$)|\n)(?:\r\n|\r(?!$)|\n)/g;
  /** The pending event's text, in the pieces it came in. */
  let pieces: string[] = [];
  /** Its last characters (at most 4, an event end's longest): where an end that the next read completes begins. */
  let tail = '';
  return new TransformStream({
    transform(chunk, controller) {
      const text = decoder.decode(chunk, { stream: true });
      if (text === '') return;
      // Searched: the new text, behind the pending event's tail (already among its pieces).
      const window = tail + text;
      /** Where in `window` the pending event's text not yet in `pieces` begins. */
      let from = tail.length;
      let ended = false;
      eventEnd.lastIndex = 0;
      for (let end = eventEnd.exec(window); end; end = eventEnd.exec(window)) {
        const cut = end.index + end[0].length;
        pieces.push(window.slice(from, cut));
        controller.enqueue(encoder.encode(mark(pieces.join(''))));
        pieces = [];
        from = cut;
        ended = true;
      }
      const rest = window.slice(from);
      if (rest !== '') pieces.push(rest);
      // The tail never reaches back past the last event end (the pending event starts there).
      tail = (ended ? rest : window).slice(-4);
    },
    flush(controller) {
      const rest = decoder.decode();
      if (rest !== '') pieces.push(rest);
      const pending = pieces.join('');
      if (pending !== '') controller.enqueue(encoder.encode(mark(pending)));
    },
  });
}

/**
 * A JSON body (application/json), whole, through `markNumbers`: its bytes kept as they came, and
 * decoded once at its end; passed on as they are when no number needs marking (most bodies).
 */
export function markJsonBody(): TransformStream<Uint8Array, Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return new TransformStream({
    transform(chunk) {
      chunks.push(chunk);
      size += chunk.byteLength;
    },
    flush(controller) {
      const bytes = Buffer.concat(chunks, size);
      const text = new TextDecoder().decode(bytes);
      const marked = markNumbers(text);
      controller.enqueue(marked === text ? bytes : new TextEncoder().encode(marked));
    },
  });
}
