import type { Config } from '../../config/index.ts';
import { allocatorSettings } from '../app/allocator-env.ts';
import { applyHeapPolicy } from '../app/heap-policy.ts';
import { DatabaseStartError, runServer } from '../app/run-server.ts';
import { ListenError } from '../app/server.ts';
import { SpoolDirLockedError } from '../app/spool-lock.ts';
import { applyWasmPolicy } from '../app/wasm-policy.ts';
import { DataDirLockedError } from '../db/index.ts';
import { createLogger } from '../log/index.ts';
import type { Telemetry } from '../telemetry/index.ts';

/** A repeat of the first stop signal this soon is the same signal delivered twice (seen 26 ms apart). */
const SIGNAL_ECHO_MS = 100;

/**
 * `plaza serve`: runs until SIGTERM/SIGINT. The first signal drains and exits 0; a second one
 * (not an echo of the first, within SIGNAL_ECHO_MS) exits at once.
 */
export async function serve(config: Config, telemetry?: Telemetry): Promise<void> {
  const log = createLogger({ level: config.logLevel });
  const heapGrowingPercent = applyHeapPolicy(config.heapGrowingPercent);
  if (heapGrowingPercent !== undefined)
    log.debug({ heapGrowingPercent }, 'old generation growth between full collections');
  const wasmTier = applyWasmPolicy(config.wasmTier, !config.databaseUrl);
  if (wasmTier !== undefined) log.debug({ wasmTier }, "V8's baseline WebAssembly compiler only");
  const allocator = allocatorSettings(process.env);
  if (allocator) log.debug({ allocator }, 'C allocator settings from the environment');
  let running;
  try {
    running = await runServer(config, log);
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      process.stderr.write(`plaza: ${error.message}\nStop the other server or set PLAZA_DATA_DIR to another folder.\n`);
      process.exit(1);
    }
    if (error instanceof SpoolDirLockedError) {
      process.stderr.write(
        `plaza: ${error.message}\nGive this instance another PLAZA_DATA_DIR (or PLAZA_RECEIPTS_SPOOL_DIR) (docs/scale-out.md).\n`,
      );
      process.exit(1);
    }
    if (error instanceof DatabaseStartError) {
      process.stderr.write(
        `plaza: ${error.message}\nCheck DATABASE_URL (or PLAZA_DATA_DIR) and that the database is up.\n`,
      );
      process.exit(1);
    }
    if (error instanceof ListenError) {
      process.stderr.write(`plaza: ${describeListenError(error)}\n`);
      process.exit(1);
    }
    throw error;
  }
  let signalled: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled !== undefined) {
      // One Ctrl-C can arrive twice within milliseconds (npm and the process group both pass it
      // on): only a second signal a person sent cuts the graceful drain short.
      if (performance.now() - signalled < SIGNAL_ECHO_MS) return;
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    signalled = performance.now();
    log.info({ signal }, 'shutting down');
    running
      .shutdown()
      .then(() => telemetry?.shutdown())
      .then(
        () => {
          log.flush();
          process.exit(0);
        },
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** What to tell the operator when the server cannot listen on its port and host. */
function describeListenError(error: ListenError): string {
  const where = `${error.host}:${error.port}`;
  if (error.code === 'EADDRINUSE')
    return `cannot listen on ${where}: the port is in use by another program. Stop it or set PORT to another port.`;
  if (error.code === 'EACCES')
    return `cannot listen on ${where}: not allowed to use that port. Set PORT to 1024 or above.`;
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN')
    return `cannot listen on ${where}: HOST is not an address of this machine. Set HOST to one of its addresses, or to 0.0.0.0 for all of them.`;
  return `${error.message}.`;
}
