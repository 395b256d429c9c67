/**
 * Reads a Server-Sent Events body and yields each event's `data` (multi-line data joined with
 * "\n"), as soon as the event's terminating blank line arrives; comments and other fields are
 * skipped. Nothing is buffered beyond the event being read.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      // A lone "\r" at the end may be the first half of "\r\n": wait for the next bytes.
      if (buffer[newline] === '\r' && newline === buffer.length - 1) break;
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
  }
  if (data.length > 0) yield data.join('\n');
}

/** One SSE event carrying `data` (which must not contain newlines; JSON text never does). */
export function sseEvent(data: string): string {
  return `data: ${data}\n\n`;
}
