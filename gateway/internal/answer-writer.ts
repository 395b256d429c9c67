/**
 * Writing answers to clients that may not read them: a write timeout that closes a connection
 * whose client takes nothing, and whole answers written a slice at a time (so a client that reads
 * slowly shows its progress, and is not cut for being slow).
 */
import type { ServerResponse } from 'node:http';

import type { AnswerHold } from '../held-answers.ts';

/** Answers longer than this (in UTF-16 units) are written a slice at a time. */
const SLICE_CHARS = 64 * 1024;

/**
 * Closes `res` once its client has taken nothing of what was written to it for `timeoutMs`
 * (bytes waiting in the response and its socket, none of them leaving): what it held is then let
 * go, and the client gets a cut connection. A response with nothing waiting (an idle event
 * stream) is never closed by it. Checked four times per period, so a stalled client is cut
 * between `timeoutMs` and 1.25 × `timeoutMs` after its last progress. Stops when `res` closes.
 */
export function guardDrain(res: ServerResponse, timeoutMs: number): void {
  if (res.destroyed || res.writableFinished) return;
  let last = res.writableLength;
  let progressAt = Date.now();
  const onDrain = () => {
    progressAt = Date.now();
  };
  const timer = setInterval(
    () => {
      const waiting = res.writableLength;
      if (waiting === 0 || waiting < last) progressAt = Date.now();
      last = waiting;
      if (Date.now() - progressAt >= timeoutMs) res.destroy();
    },
    Math.max(10, Math.floor(timeoutMs / 4)),
  );
  timer.unref();
  res.on('drain', onDrain);
  res.once('close', () => {
    clearInterval(timer);
    res.off('drain', onDrain);
  });
}

/**
 * Writes a whole answer (`status`, `headers`, `text`) to a client that may not read it: held in
 * `hold` (its bytes) until the client has taken it or the connection closed, written a slice at a
 * time (each slice turned into bytes as it goes: the text is the one copy held), and cut by
 * guardDrain when the client takes nothing for `timeoutMs`. Returns at once: the caller's frame
 * (with the answer's parsed form, the upstream's raw text) is let go while the client reads.
 */
export function writeHeldAnswer(
  res: ServerResponse,
  answer: { status: number; headers: Record<string, string | number>; text: string },
  hold: AnswerHold,
  timeoutMs: number,
): void {
  const { text } = answer;
  const length = Buffer.byteLength(text);
  hold.keep(length);
  if (res.closed) hold.release();
  else res.once('close', () => hold.release());
  if (res.destroyed) return;
  res.writeHead(answer.status, { ...answer.headers, 'content-length': length });
  if (text.length <= SLICE_CHARS) {
    res.end(text);
    // Handed whole to the socket's kernel buffer (the usual case): nothing waits for the client,
    // so there is nothing to time out, and no timer or listeners to set up per answer.
    if (res.writableLength > 0) guardDrain(res, timeoutMs);
    return;
  }
  guardDrain(res, timeoutMs);
  void writeSlices(res, text).catch(() => res.destroy());
}

/** Writes `text` a slice at a time, each once the last has drained, and ends `res`. */
async function writeSlices(res: ServerResponse, text: string): Promise<void> {
  let offset = 0;
  while (text.length - offset > SLICE_CHARS) {
    // A slice never splits a surrogate pair: each is encoded on its own.
    let end = offset + SLICE_CHARS;
    if ((text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    if (!res.write(text.slice(offset, end))) await drainedOrClosed(res);
    if (res.destroyed) return;
    offset = end;
  }
  res.end(text.slice(offset));
}

/** Resolves once `res` drained its buffered writes, or closed. */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
