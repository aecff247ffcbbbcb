/**
 * The real servers of the machine, for adapter contract tests and distributed-topology tests.
 * Each test isolates itself: a unique Redis key prefix, a fresh Postgres schema.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const uniquePrefix = (label = 't'): string => `ac-test:${label}:${randomUUID().slice(0, 8)}:`;

/** A Postgres URL whose connections use a new, empty schema (search_path), dropped by `drop`. */
export async function freshPostgres(label = 't'): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `t_${label.replace(/\W/g, '_')}_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    },
  };
}
