import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, deflateRawSync } from 'node:zlib';

const deflateRawAsync = promisify(deflateRaw);

/**
 * gzip header: deflate, no flags, mtime 0, no extra flags, OS 255 ("unknown"), so archives are
 * the same bytes on every platform.
 */
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);

/** An empty final stored block: ends the deflate stream. */
const FINAL_BLOCK = Buffer.from([0x01, 0x00, 0x00, 0xff, 0xff]);

const MAX_STORED = 0xffff;

/** Bytes of each sample, and samples per batch, that decide whether a batch is worth deflating. */
const SAMPLE_BYTES = 4_096;
const SAMPLES = 4;

/**
 * Whether deflating `batch` pays: four 4 KiB samples spread over it are deflated at `level`;
 * under 10% saved means the bytes are compressed or random already. Depends on the bytes alone.
 */
export function worthDeflating(batch: Buffer, level: number): boolean {
  if (batch.length <= SAMPLE_BYTES * SAMPLES) return true;
  let raw = 0;
  let packed = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const start = Math.floor(((batch.length - SAMPLE_BYTES) * i) / (SAMPLES - 1));
    const sample = batch.subarray(start, start + SAMPLE_BYTES);
    raw += sample.length;
    packed += deflateRawSync(sample, { level }).length;
  }
  return packed < raw * 0.9;
}

/** `batch` as non-final stored deflate blocks (the stream is byte-aligned between batches). */
function storedBlocks(batch: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < batch.length; at += MAX_STORED) {
    const part = batch.subarray(at, at + MAX_STORED);
    const head = Buffer.alloc(5);
    head[0] = 0x00;
    head.writeUInt16LE(part.length, 1);
    head.writeUInt16LE(~part.length & 0xffff, 3);
    out.push(head, part);
  }
  return out;
}

/**
 * gzips a stream of batches into one standard gzip member, batch by batch: a batch worth deflating
 * is deflated on its own (zlib, `level`, ending in a full flush so it neither reaches back into
 * earlier batches nor closes the stream), any other batch is written as stored blocks — a copy
 * instead of ~20 MB/s of futile deflate over random or already-compressed bytes. Up to
 * `parallel` batches are deflated at once on libuv's pool (the pack uses every core), output
 * stays in order. The result depends only on the input bytes and the zlib version, so packing
 * stays reproducible; `gzip`, `tar` and Node's gunzip read it like any other gzip file.
 */
export async function* gzipBatches(
  batches: AsyncIterable<Buffer>,
  options: { level: number; parallel?: number },
): AsyncGenerator<Buffer> {
  const parallel = options.parallel ?? 2;
  const deflate = (batch: Buffer) =>
    deflateRawAsync(batch, { level: options.level, finishFlush: constants.Z_FULL_FLUSH });
  yield HEADER;
  let crc = 0;
  let size = 0;
  const pending: Promise<Buffer[]>[] = [];
  for await (const batch of batches) {
    crc = crc32(batch, crc);
    size = (size + batch.length) % 2 ** 32;
    pending.push(
      worthDeflating(batch, options.level) ? deflate(batch).then((b) => [b]) : Promise.resolve(storedBlocks(batch)),
    );
    // Never leave a rejected promise unobserved while waiting for the batches ahead of it.
    pending.at(-1)!.catch(() => undefined);
    if (pending.length >= parallel) yield* await pending.shift()!;
  }
  while (pending.length > 0) yield* await pending.shift()!;
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size, 4);
  yield Buffer.concat([FINAL_BLOCK, trailer]);
}
