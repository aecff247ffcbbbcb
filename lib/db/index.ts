import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

export type { Db, Migration, Queryable } from './db.ts';
export { migrate } from './db.ts';

/** Postgres when DATABASE_URL is set, else the embedded store. */
export function openDb(config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'EMBEDDED_DB'>): Promise<Db> {
  if (config.DATABASE_URL) return openPostgres(config.DATABASE_URL);
  return openPglite(config.EMBEDDED_DB === 'disk' ? config.DATA_DIR : undefined);
}
