/**
 * How many times `table` was vacuumed by hand (pg_stat_user_tables.vacuum_count): the tests of
 * the embedded store's upkeep (lib/db/upkeep.ts) read it before and after.
 */
import type { Queryable } from '../../lib/db/index.ts';

export async function vacuumCount(db: Queryable, table: string): Promise<number> {
  const [row] = await db.query<{ n: string }>(
    'SELECT vacuum_count::text AS n FROM pg_stat_user_tables WHERE relname = $1',
    [table],
  );
  return Number(row?.n);
}
