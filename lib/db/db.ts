/**
 * The SQL store behind orders, audit, catalog and promotions. Two adapters run the same SQL:
 * PGlite (embedded, on disk under DATA_DIR) and PostgreSQL (DATABASE_URL).
 */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * `COPY … FROM STDIN` (text format) of `rows`, each one line of tab-separated fields written
   * with copyRow (./copy.ts). PostgreSQL only, inside a transaction: absent elsewhere (PGlite),
   * whose callers keep their statements.
   */
  copyFrom?(sql: string, rows: Iterable<string>): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * The embedded store only: how its data directory was made at this open, `template` (loaded
   * from EMBEDDED_DB_TEMPLATE or the build's, lib/db/pglite-template.ts) or `initdb`; absent when
   * it opened one that existed (and on PostgreSQL). Logged at start (lib/platform.ts).
   */
  readonly madeFrom?: 'template' | 'initdb';
  /** Runs several statements (migrations, seeds); no parameters. */
  exec(sql: string): Promise<void>;
  /** Runs fn in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface Migration {
  /** Unique per module and increasing: `pricing:001-catalog`. */
  id: string;
  sql: string;
}

/**
 * Applies migrations once each. An advisory lock serialises concurrent starters (several
 * processes against one Postgres), so two processes never apply the same migration.
 */
export async function migrate(db: Db, migrations: readonly Migration[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(727274)');
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id),
    );
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.query(m.sql);
      await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [m.id]);
    }
  });
}
