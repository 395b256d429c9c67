/**
 * A minimal, deterministic ustar header writer. Pack uses it with fixed owners and times; tests use
 * it to build hostile archives by hand, so it validates nothing beyond what the format can hold.
 */

/** Fields of one ustar header. */
export interface UstarFields {
  path: string;
  /** ustar typeflag: '0' file, '2' symlink, '5' directory, '1' hard link, '3'/'4' devices, '6' fifo. */
  type: string;
  mode: number;
  /** Declared size; values of 8 GiB and more use the base-256 (GNU) encoding. */
  size?: number | bigint;
  linkpath?: string;
  mtime?: number;
  uid?: number;
  gid?: number;
  uname?: string;
  gname?: string;
}

const BLOCK = 512;

function octal(buf: Buffer, offset: number, width: number, value: number): void {
  buf.write(`${value.toString(8).padStart(width - 1, '0')}\0`, offset, width, 'ascii');
}

function writeSize(buf: Buffer, value: bigint): void {
  if (value < 8n ** 11n) {
    octal(buf, 124, 12, Number(value));
    return;
  }
  // base-256: high bit of the first byte set, value big-endian in the remaining 11 bytes
  buf[124] = 0x80;
  let v = value;
  for (let i = 135; i > 124; i--) {
    buf[i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

function splitPath(path: string): { name: string; prefix: string } {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== '') return { name, prefix };
  }
  throw new Error(`path too long for a ustar header: ${path}`);
}

/** Builds one 512-byte ustar header. */
export function ustarHeader(f: UstarFields): Buffer {
  const buf = Buffer.alloc(BLOCK);
  const { name, prefix } = splitPath(f.path);
  buf.write(name, 0, 100, 'utf8');
  octal(buf, 100, 8, f.mode & 0o7777);
  octal(buf, 108, 8, f.uid ?? 0);
  octal(buf, 116, 8, f.gid ?? 0);
  writeSize(buf, BigInt(f.size ?? 0));
  octal(buf, 136, 12, f.mtime ?? 0);
  buf.fill(0x20, 148, 156);
  buf.write(f.type, 156, 1, 'ascii');
  if (f.linkpath) buf.write(f.linkpath, 157, 100, 'utf8');
  buf.write('ustar\0', 257, 6, 'ascii');
  buf.write('00', 263, 2, 'ascii');
  buf.write(f.uname ?? 'root', 265, 32, 'utf8');
  buf.write(f.gname ?? 'root', 297, 32, 'utf8');
  octal(buf, 329, 8, 0);
  octal(buf, 337, 8, 0);
  buf.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of buf) sum += byte;
  buf.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return buf;
}

/** Zero bytes that pad `size` bytes of content to a whole block. */
export function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** The two zero blocks that end an archive. */
export const END_OF_ARCHIVE = Buffer.alloc(BLOCK * 2);
