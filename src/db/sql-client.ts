/** The small raw-SQL surface Plaza needs beside Prisma: migrations, leases, health pings. */
export interface SqlClient {
  /** Runs one parameterised statement and returns its rows. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements (no parameters). */
  exec(text: string): Promise<void>;
}

/** A SqlClient bound to one session, so session state (locks, transactions) holds across calls. */
export interface SqlSession extends SqlClient {
  release(): Promise<void>;
}

/** A SqlClient that can hand out a dedicated session. */
export interface SqlPool extends SqlClient {
  session(): Promise<SqlSession>;
  /**
   * Runs `work` in one transaction on one session: committed when it resolves, rolled back when it
   * throws. Cheaper than Prisma's interactive transactions for short, hot writes (receipts).
   * `begin`: constant, parameterless SQL (never built from input) run first inside the
   * transaction, sent with BEGIN in one round trip on PostgreSQL (e.g. taking an advisory lock).
   */
  transaction<T>(work: (tx: SqlClient) => Promise<T>, options?: { begin?: string }): Promise<T>;
}
