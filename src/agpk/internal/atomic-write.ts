import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** fsyncs a directory so a rename inside it survives a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = await open(dir, 'r');
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

/** Writes `data` to `path` atomically: temp file in the same folder, fsync, rename, fsync folder. */
export async function writeFileAtomic(path: string, data: string | Buffer, mode = 0o644): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = await open(tmp, 'wx', mode);
  try {
    await fd.writeFile(data);
    await fd.sync();
  } catch (error) {
    await fd.close();
    await rm(tmp, { force: true });
    throw error;
  }
  await fd.close();
  try {
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await fsyncDir(dirname(path));
}
