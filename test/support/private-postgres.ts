/**
 * A private PostgreSQL cluster for tests that stop and restart the server itself: Debian's
 * binaries (`/usr/lib/postgresql/<version>/bin`), a cluster initialised in a temporary folder, trust
 * authentication, TCP on a free port of 127.0.0.1 and its unix socket in the same folder. initdb
 * refuses to run as root, so as root every command runs as the `postgres` user (`runuser`) and the
 * folder is handed to that user.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { freePort } from './cli.ts';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

/** The newest installed server's bin folder, or undefined when no initdb is installed. */
function binDir(): string | undefined {
  if (!existsSync(PG_ROOT)) return undefined;
  const versions = readdirSync(PG_ROOT)
    .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(PG_ROOT, versions[0], 'bin');
}

/** uid and gid of the `postgres` user, when there is one. */
function postgresUser(): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

const isRoot = process.getuid?.() === 0;

/** Why a private cluster cannot be started here, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!binDir()) return `no initdb under ${PG_ROOT}/*/bin (install the postgresql package)`;
  if (isRoot && !postgresUser())
    return 'running as root (initdb refuses root) and there is no postgres user to run it as';
  if (isRoot && spawnSync('runuser', ['--help']).status !== 0)
    return 'running as root (initdb refuses root) and runuser is missing';
  return undefined;
}

/** A running private cluster. */
export interface PrivatePostgres {
  port: number;
  /** `postgresql://postgres@127.0.0.1:<port>/<database>`. */
  url(database?: string): string;
  /** `pg_ctl restart -m fast`: every session is ended, the server is back when this resolves. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void>;
  /** `pg_ctl start`, waiting until connections are accepted. */
  start(): Promise<void>;
  /** The server's log so far. */
  log(): string;
  /** Stops the server at once and removes its folder. */
  close(): Promise<void>;
}

/** initdb into a temporary folder and start the server; throws when it cannot (see privatePostgresUnavailable). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const unavailable = privatePostgresUnavailable();
  if (unavailable) throw new Error(unavailable);
  const bin = binDir()!;
  const dir = mkdtempSync(join(tmpdir(), 'plaza-private-pg-'));
  const user = isRoot ? postgresUser() : undefined;
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  // fsync off: a clean restart keeps every committed row; only an OS crash would lose them.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;

  const command = (program: string, args: string[]) =>
    user
      ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { cwd: dir })
      : run(join(bin, program), args, { cwd: dir });
  const pgCtl = (args: string[]) => command('pg_ctl', ['-D', data, '-l', logFile, '-t', '15', '-w', ...args]);

  await command('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  await pgCtl(['-o', options, 'start']);
  return {
    port,
    url: (database = 'postgres') => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    restart: async () => void (await pgCtl(['-o', options, '-m', 'fast', 'restart'])),
    stop: async () => void (await pgCtl(['-m', 'fast', 'stop'])),
    start: async () => void (await pgCtl(['-o', options, 'start'])),
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    async close() {
      await pgCtl(['-m', 'immediate', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
