/**
 * The open-source scan on a thread of its own (see scanOffThread): its rules read publisher text
 * of up to 4 MiB a file synchronously, about a second for the worst of it, which the server's
 * event loop — the gateway, the token API, the website — should not wait out.
 */
import { parentPort, workerData } from 'node:worker_threads';

import type { AgpkManifest } from '../agpk/index.ts';
import { scanPackageDir } from './scan.ts';

const { dir, manifest, denyList } = workerData as {
  dir: string;
  manifest: AgpkManifest | undefined;
  denyList: ReadonlyMap<string, string>;
};
parentPort!.postMessage(await scanPackageDir(dir, manifest, denyList));
