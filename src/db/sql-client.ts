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

/** The session of one transaction (see {@link SqlPool.transaction}). */
export interface SqlTransaction extends SqlClient {
  /** The rows of the last statement of the `begin` script; empty without one. */
  readonly begun: Record<string, unknown>[];
  /**
   * Runs `script` (statements without parameters) and COMMIT, in one round trip on PostgreSQL.
   * The transaction is over once it resolves: `work` returns next, without further statements.
   * When a statement fails nothing is committed: it rejects, and the transaction rolls back.
   */
  commitWith(script: string): Promise<void>;
}

/** A SqlClient that can hand out a dedicated session. */
export interface SqlPool extends SqlClient {
  session(): Promise<SqlSession>;
  /**
   * Runs `work` in one transaction on one session: committed when it resolves, rolled back when it
   * throws. Cheaper than Prisma's interactive transactions for short, hot writes (receipts).
   * `begin`: statements without parameters, built only from constants and numbers Plaza computed
   * (never from input), run first inside the transaction and sent with BEGIN in one round trip on
   * PostgreSQL (e.g. taking an advisory lock and reading what the work needs); `tx.begun` holds
   * the rows of its last statement.
   */
  transaction<T>(work: (tx: SqlTransaction) => Promise<T>, options?: { begin?: string }): Promise<T>;
  /**
   * Runs `script` (statements without parameters, no BEGIN or COMMIT of its own) as one implicit
   * transaction in one round trip, and returns the rows of its last statement. When a statement
   * fails, nothing of the script is committed and it rejects. Same rule as `begin` above: built
   * only from constants and values Plaza computed or escaped itself.
   */
  script(script: string): Promise<Record<string, unknown>[]>;
}
