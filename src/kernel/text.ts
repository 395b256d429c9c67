/**
 * Text as PostgreSQL can store it and as JSON hashes it: NUL (which no text column takes) and lone
 * surrogates (which UTF-8 cannot encode: a driver stores U+FFFD where JSON.stringify writes an
 * escape) both become U+FFFD. For text that arrives from outside (upstream answers, tool names) on
 * its way into a row, so one odd byte cannot fail the write or make a stored row disagree with a
 * hash taken before it was stored.
 */
export function storableText(value: string): string {
  return value.toWellFormed().replaceAll('\0', '\uFFFD');
}

/**
 * Text from someone else shown on a terminal: control characters (an escape sequence could hide a
 * line or rewrite what is shown around it) and line separators are written as `\u{…}`, and text
 * longer than `maxChars` is cut short with an ellipsis.
 */
export function terminalText(text: string, maxChars = Number.POSITIVE_INFINITY): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced
  const safe = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
  return safe.length > maxChars ? `${safe.slice(0, maxChars - 1)}…` : safe;
}

/** A line longer than a splitter's `maxLineLength`: the stream is not one to keep reading. */
export class LineTooLongError extends Error {
  constructor(limit: number) {
    super(`a line exceeds ${limit} characters`);
    this.name = 'LineTooLongError';
  }
}

/** See {@link createLineSplitter}. */
export interface LineSplitter {
  /** Feeds text; returns the lines it completed, without their line ends. */
  push(text: string): string[];
  /** The unterminated last line, if any text follows the last line end. */
  end(): string | undefined;
}

/**
 * Splits streamed text into lines ending in CRLF, LF or CR (the event-stream rules), even when a
 * CRLF is cut between two chunks. Linear in the text however it is chunked: only new text is
 * scanned, and an unfinished line is kept as pieces, joined once when it ends (a 16 MB line in
 * 1 KB chunks used to be rescanned and recopied on every chunk). With `maxLineLength`, a line
 * that grows past it throws {@link LineTooLongError} instead of being held.
 */
export function createLineSplitter(options: { maxLineLength?: number } = {}): LineSplitter {
  const maxLine = options.maxLineLength ?? Number.POSITIVE_INFINITY;
  let pieces: string[] = [];
  let pending = 0;
  // A CR that ended the last chunk already ended its line; an LF starting the next one is its pair.
  let skipLf = false;
  return {
    push(text) {
      const lines: string[] = [];
      let start = 0;
      if (skipLf && text.length > 0) {
        if (text.charCodeAt(0) === 10) start = 1;
        skipLf = false;
      }
      // Line ends are found with indexOf (native, many times faster than a loop over characters);
      // text without a CR, nearly all of it, needs only the LF search.
      // Each search resumes where the last found one: the next CR is looked for again only once
      // the scan has passed it, so the text is searched once whatever its mix of line ends.
      let cr = text.indexOf('\r', start);
      let lf = text.indexOf('\n', start);
      for (;;) {
        if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
        if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
        let i = lf;
        if (cr !== -1 && (i === -1 || cr < i)) i = cr;
        if (i === -1) break;
        if (pending + (i - start) > maxLine) throw new LineTooLongError(maxLine);
        const line = text.slice(start, i);
        if (pieces.length === 0) lines.push(line);
        else {
          pieces.push(line);
          lines.push(pieces.join(''));
          pieces = [];
        }
        pending = 0;
        if (text.charCodeAt(i) === 13) {
          if (i === text.length - 1) skipLf = true;
          else if (text.charCodeAt(i + 1) === 10) i++;
        }
        start = i + 1;
      }
      if (start < text.length) {
        pending += text.length - start;
        if (pending > maxLine) throw new LineTooLongError(maxLine);
        pieces.push(text.slice(start));
      }
      return lines;
    },
    end() {
      if (pieces.length === 0) return undefined;
      const rest = pieces.join('');
      pieces = [];
      pending = 0;
      return rest;
    },
  };
}
