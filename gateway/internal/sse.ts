import { createLineSplitter } from '../../src/kernel/index.ts';

/** One Server-Sent Event as the MCP streamable HTTP transport uses them. */
export interface SseEvent {
  event?: string;
  id?: string;
  retry?: string;
  /** The data lines joined with "\n". */
  data?: string;
  /** Comment lines (": …"), kept so keep-alives pass through. */
  comments?: string[];
}

/**
 * Incremental SSE parser (WHATWG event-stream rules): feed it chunks of text, get complete events.
 * Handles \n, \r\n and \r line ends, multi-line data, comments; tolerates a final partial line.
 */
export function createSseParser(): { push(chunk: string): SseEvent[]; end(): SseEvent[] } {
  const lines = createLineSplitter();
  let current: SseEvent = {};
  let hasFields = false;
  const events: SseEvent[] = [];

  const line = (text: string) => {
    if (text === '') {
      if (hasFields) events.push(current);
      current = {};
      hasFields = false;
      return;
    }
    hasFields = true;
    if (text.startsWith(':')) {
      (current.comments ??= []).push(text.slice(1));
      return;
    }
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') current.data = current.data === undefined ? value : `${current.data}\n${value}`;
    else if (field === 'event') current.event = value;
    else if (field === 'id') current.id = value;
    else if (field === 'retry') current.retry = value;
  };

  return {
    push(chunk) {
      for (const text of lines.push(chunk)) line(text);
      return events.splice(0);
    },
    end() {
      const rest = lines.end();
      if (rest !== undefined) {
        line(rest);
        line('');
      }
      return events.splice(0);
    },
  };
}
/** Serialises an event back to the wire. */
export function formatSseEvent(event: SseEvent): string {
  let out = '';
  for (const comment of event.comments ?? []) out += `:${comment}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.retry !== undefined) out += `retry: ${event.retry}\n`;
  if (event.data !== undefined) for (const part of event.data.split('\n')) out += `data: ${part}\n`;
  return `${out}\n`;
}
