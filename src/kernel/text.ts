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
      for (let i = start; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        if (pending + (i - start) > maxLine) throw new LineTooLongError(maxLine);
        pieces.push(text.slice(start, i));
        lines.push(pieces.length === 1 ? pieces[0]! : pieces.join(''));
        pieces = [];
        pending = 0;
        if (c === 13) {
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
