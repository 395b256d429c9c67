// Builds (or finds) the cached PGlite data-folder template; see src/db/pglite-template.ts.
import { pgliteTemplate } from '../src/db/index.ts';

const started = Date.now();
const blob = await pgliteTemplate();
process.stdout.write(
  `plaza: PGlite template ready (${Math.round(blob.size / 1024)} KiB, ${Date.now() - started} ms)\n`,
);
