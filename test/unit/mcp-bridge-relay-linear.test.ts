/**
 * Pins that the stdio bridge reads an event of the gateway's event stream in time linear in its
 * size: the event-size guard of the notification stream and the pass that marks numbers
 * (markEventStream) see every read of the body. The pending event was appended to one string and
 * searched with a regex at every read, which copied it whole each time: a 16 MiB event took
 * seconds (bench/mcp-bridge.ts, ~4 MiB/s), its time growing with the square of its size; and an
 * event whose data needed marking looked each of its lines up among all its data lines.
 *
 * Each case is read at a small size and at 16 times as much, in reads of a fixed size, and the
 * larger read must cost under 64 times the smaller's CPU time (the process's, so other work on the
 * machine does not count; a smaller read under 5 ms counts as 5, timer and JIT noise): a linear
 * reader costs about 16 times (4-7 measured, the smaller read floored), a quadratic one up to 256
 * (the old reader measured 93 on the long line and 240 on the many lines).
 * In the style of sources-scan-linear.test.ts; no wall-clock limit.
 */
import { describe, expect, it } from 'vitest';

import { eventSizeGuard } from '../../src/cli/mcp-bridge-fetch.ts';
import { markEventStream } from '../../src/cli/mcp-bridge-numbers.ts';

const KiB = 1024;
const TIMES = 16;
/** The most the larger read may cost, in smaller reads: 4 times linear, a quarter of quadratic. */
const MOST = 64;

/**
 * Reads `text` (an event stream) cut into reads of `read` bytes, through the notification
 * stream's size guard and markEventStream, as the bridge's fetch does; returns the CPU milliseconds
 * (user + system) the process spent, and what came out.
 */
async function relay(text: string, read: number): Promise<{ ms: number; out: string }> {
  const bytes = new TextEncoder().encode(text);
  const guard = eventSizeGuard(64 * 1024 * KiB);
  const before = process.cpuUsage();
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += read) controller.enqueue(bytes.subarray(i, i + read));
      controller.close();
    },
  });
  const guarded = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      guard(chunk);
      controller.enqueue(chunk);
    },
  });
  const parts: Uint8Array[] = [];
  for await (const part of source.pipeThrough(guarded).pipeThrough(markEventStream())) parts.push(part);
  const used = process.cpuUsage(before);
  return { ms: (used.user + used.system) / 1000, out: Buffer.concat(parts).toString('utf8') };
}

/** A notification whose data is one line of about `size` bytes (passed as it came). */
function oneLine(size: number): string {
  return `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${'lorem ipsum '.repeat(size / 12)}"}}\n\n`;
}

/** An answer whose data is `size / 32` lines, with a number past 2^53 (so the data is marked and joined on one line). */
function manyLines(size: number): string {
  const lines = Array.from({ length: size / 32 }, (_, i) => `data: "item ${String(i).padStart(8, '0')} lorem",\n`);
  return `event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"n":9007199254740993,"items":[\n${lines.join('')}data: "end"]}}\n\n`;
}

describe('the bridge reading an event of the gateway', () => {
  it.each([
    ['one long data line', oneLine, 256 * KiB, 4 * KiB],
    ['many data lines, marked', manyLines, 32 * KiB, 4 * KiB],
  ])(
    `stays linear from the small size to ${TIMES} times as much: %s`,
    async (_what, make, small, read) => {
      const first = await relay(make(small), read);
      // The cheaper of two small reads: the first may pay for compiling.
      const smallMs = Math.max(5, Math.min(first.ms, (await relay(make(small), read)).ms));
      const large = await relay(make(TIMES * small), read);
      // What came out is the event (marked when it had to be), whole.
      expect(JSON.parse(/^data: (.*)$/m.exec(large.out)![1]!)).toBeTruthy();
      expect(large.out.endsWith('\n\n')).toBe(true);
      expect(
        large.ms / smallMs,
        `${smallMs.toFixed(0)} ms CPU small, ${large.ms.toFixed(0)} ms at ${TIMES} times the size`,
      ).toBeLessThan(MOST);
    },
    60_000,
  );
});
