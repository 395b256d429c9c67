import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { parseLossless, rawJson, serialise } from './mcp-bridge-numbers.ts';

/**
 * What the stdio bridge reads from its client: one line at a time, each read as JSON-RPC 2.0 by
 * the bridge itself. The SDK's StdioServerTransport drops a line its schema refuses (not JSON, an
 * id past 2^53, an id `null`, a member JSON-RPC does not name, a batch) after telling only its
 * onerror, so the client waited for an answer that never came.
 */

const INTEGER = /^-?\d+$/;

/** An integer id past 2^53 - 1: kept as written (JSON.rawJSON), or a number JSON.parse read exactly (2^53). */
function isBigInteger(id: unknown): boolean {
  return rawJson.isRawJSON(id) ? INTEGER.test(id.rawJSON) : Number.isInteger(id) && !Number.isSafeInteger(id);
}

/** An error the bridge answers itself (JSON-RPC 2.0 §5), under the id it could read, else null. */
export interface BridgeAnswer {
  jsonrpc: '2.0';
  /** The id as the client wrote it: a string, a number, the raw digits of one past 2^53, or null. */
  id: string | number | object | null;
  error: { code: number; message: string };
}

/** One message of the client's, read: passed on, or refused (answered when JSON-RPC says so). */
export type ClientMessage =
  | {
      kind: 'message';
      message: JSONRPCMessage;
      /** Top-level members JSON-RPC does not name, left off the message passed on. */
      dropped: string[];
    }
  | { kind: 'refused'; why: string; answer?: BridgeAnswer };

/** One line of the client's: a message, a batch (an array of them), or nothing (a blank line). */
export type ClientLine = ClientMessage | { kind: 'batch'; items: ClientMessage[] };

/** The members JSON-RPC 2.0 names; any other is left off what goes to the gateway. */
const MEMBERS = {
  request: ['jsonrpc', 'id', 'method', 'params'],
  notification: ['jsonrpc', 'method', 'params'],
  response: ['jsonrpc', 'id', 'result', 'error'],
};

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !rawJson.isRawJSON(value);
}

/** An error answer of the bridge's own. */
export function bridgeError(id: BridgeAnswer['id'], code: number, message: string): BridgeAnswer {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** The text of an id kept as written (past 2^53), for messages and stderr. */
function idText(id: unknown): string {
  return rawJson.isRawJSON(id) ? id.rawJSON : JSON.stringify(id);
}

/** `message` with only the members `kept`. */
function only(message: Record<string, unknown>, kept: string[]): { message: JSONRPCMessage; dropped: string[] } {
  const out: Record<string, unknown> = {};
  for (const name of kept) if (name in message) out[name] = message[name];
  return { message: out as JSONRPCMessage, dropped: Object.keys(message).filter((name) => !kept.includes(name)) };
}

function refused(why: string, id: BridgeAnswer['id'] | undefined): ClientMessage {
  return id === undefined
    ? { kind: 'refused', why }
    : { kind: 'refused', why, answer: bridgeError(id, INVALID_REQUEST, `Invalid Request: ${why}`) };
}

/** Reads one parsed message (or one element of a batch). */
export function readClientMessage(value: unknown): ClientMessage {
  if (!isRecord(value)) return refused('not a JSON-RPC message (a JSON object)', null);
  const { id, method } = value;
  // An id the answer can carry back: the client matches the refusal to its request by it.
  const readable = typeof id === 'string' || typeof id === 'number' || rawJson.isRawJSON(id) ? id : null;
  const isResponse = !('method' in value) && ('result' in value || 'error' in value);
  // A response of the client's (to a server's request) gets no answer, whatever is wrong with it.
  if (value['jsonrpc'] !== '2.0') return refused('"jsonrpc" must be "2.0"', isResponse ? undefined : readable);
  if (isResponse) {
    // An id past 2^53 may answer a request of the gateway's (the bridge passes those on as written).
    if (typeof id !== 'string' && !Number.isSafeInteger(id) && !isBigInteger(id))
      return refused(`a response whose id ${idText(id)} answers no request`, undefined);
    if ('result' in value && 'error' in value)
      return refused(`the response to ${idText(id)} holds both "result" and "error"`, undefined);
    return { kind: 'message', ...only(value, MEMBERS.response) };
  }
  if (typeof method !== 'string') return refused('"method" must be a string', readable);
  if (
    'params' in value &&
    (typeof value['params'] !== 'object' || value['params'] === null || rawJson.isRawJSON(value['params']))
  )
    return refused('"params" must be an object or an array', readable);
  if (!('id' in value)) return { kind: 'message', ...only(value, MEMBERS.notification) };
  if (id === null) return refused('MCP request ids are strings or integers, never null', null);
  if (isBigInteger(id)) {
    return refused(
      `the request id ${idText(id)} is past 2^53 - 1, the largest integer JSON-RPC peers read exactly: its answer would come back under another id`,
      id as BridgeAnswer['id'],
    );
  }
  if (typeof id !== 'string' && !Number.isSafeInteger(id))
    return refused(`the request id ${idText(id)} is neither a string nor an integer`, readable);
  return { kind: 'message', ...only(value, MEMBERS.request) };
}

/**
 * Reads one line of the client's. A number JSON.parse would change (an integer past 2^53, a
 * decimal of more than 15 significant digits) is kept as written: in the arguments of a call or a
 * result passed on, and in an id, so that a refusal answers under the id the client sent.
 */
export function readClientLine(line: string): ClientLine | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = parseLossless(line);
  } catch {
    return {
      kind: 'refused',
      why: 'the line is not JSON',
      answer: bridgeError(null, PARSE_ERROR, 'Parse error: the line is not JSON'),
    };
  }
  if (!Array.isArray(value)) return readClientMessage(value);
  if (value.length === 0) return refused('an empty batch holds no message', null);
  return { kind: 'batch', items: value.map(readClientMessage) };
}

/** Options of readLines. */
export interface LineReaderOptions {
  /** Called with each line, without its line end (LF or CRLF). */
  onLine(line: string): void;
  /** Called for a line longer than `maxLineBytes`, which is skipped up to its end. */
  onOversize(): void;
  /** Called once the stream ended, after its last line (also one without a line end). */
  onEnd(): void;
  maxLineBytes: number;
}

/**
 * Splits `input` into lines (MCP's stdio framing). A line past `maxLineBytes` is skipped to its
 * end, and reading goes on: the SDK's transport closed itself (and the bridge exited) instead.
 * Returns a function that stops reading.
 */
export function readLines(input: NodeJS.ReadableStream, options: LineReaderOptions): () => void {
  // The line being read, in the pieces it came in: joined once, at its end. (Joined at every
  // read, and searched from its start for its end, a 10 MiB line took seconds.)
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  const line = (bytes: Buffer) => options.onLine(bytes.toString('utf8').replace(/\r$/, ''));
  const onData = (chunk: Buffer | string) => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let end = data.indexOf(0x0a); end !== -1; end = data.indexOf(0x0a, start)) {
      const piece = data.subarray(start, end);
      start = end + 1;
      const length = size + piece.length;
      const before = parts;
      parts = [];
      size = 0;
      if (skipping) skipping = false;
      else if (length > options.maxLineBytes) options.onOversize();
      else line(before.length === 0 ? piece : Buffer.concat([...before, piece], length));
    }
    if (skipping || start === data.length) return;
    const rest = data.subarray(start);
    if (size + rest.length > options.maxLineBytes) {
      options.onOversize();
      skipping = true;
      parts = [];
      size = 0;
      return;
    }
    parts.push(rest);
    size += rest.length;
  };
  let ended = false;
  const onEnd = () => {
    if (ended) return;
    ended = true;
    if (size > 0 && !skipping) line(Buffer.concat(parts, size));
    parts = [];
    options.onEnd();
  };
  // A stdin that fails to read (its pipe gone) has ended for the bridge: no 'error' goes unhandled.
  input.on('data', onData);
  input.once('end', onEnd);
  input.on('error', onEnd);
  return () => {
    input.off('data', onData);
    input.off('end', onEnd);
    input.pause();
  };
}

/**
 * Writes messages to `output`, one JSON line each, numbers as the gateway wrote them (see
 * mcp-bridge-numbers.ts); resolves once written (or buffered, after a drain).
 */
export function lineWriter(output: NodeJS.WritableStream): (message: unknown) => Promise<void> {
  return (message) =>
    new Promise((resolve) => {
      if (output.write(`${serialise(message)}\n`)) resolve();
      else output.once('drain', () => resolve());
    });
}
