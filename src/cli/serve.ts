import type { Config } from '../../config/index.ts';
import { runServer } from '../app/run-server.ts';
import { DataDirLockedError } from '../db/index.ts';
import { createLogger } from '../log/index.ts';
import type { Telemetry } from '../telemetry/index.ts';

/**
 * `plaza serve`: runs until SIGTERM/SIGINT. The first signal drains and exits 0; a second one
 * exits at once.
 */
export async function serve(config: Config, telemetry?: Telemetry): Promise<void> {
  const log = createLogger({ level: config.logLevel });
  let running;
  try {
    running = await runServer(config, log);
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      process.stderr.write(`plaza: ${error.message}\nStop the other server or set PLAZA_DATA_DIR to another folder.\n`);
      process.exit(1);
    }
    const listenProblem = describeListenError(error, config);
    if (listenProblem) {
      process.stderr.write(`plaza: ${listenProblem}\n`);
      process.exit(1);
    }
    throw error;
  }
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    signalled = true;
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

/** What to tell the operator when the server cannot listen, or undefined for other errors. */
function describeListenError(error: unknown, config: Config): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return `cannot listen on ${where}: the port is in use by another program. Stop it or set PORT to another port.`;
  if (code === 'EACCES') return `cannot listen on ${where}: not allowed to use that port. Set PORT to 1024 or above.`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot listen on ${where}: HOST is not an address of this machine. Set HOST (e.g. 127.0.0.1 or 0.0.0.0).`;
  return undefined;
}
