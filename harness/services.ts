/**
 * The real servers of the machine, for adapter contract tests and distributed-topology tests.
 * Each test isolates itself: a unique Redis key prefix, a fresh Postgres schema.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * How tests make new embedded stores: from the template tarball the vitest global setup names
 * (test/support/global-setup.ts; EMBEDDED_DB_TEMPLATE, lib/db/pglite.ts), not by initdb each
 * time. As environment for a system or process, and as options of `openPglite`.
 */
export const TEST_STORE_ENV: Readonly<Record<string, string>> = process.env.EMBEDDED_DB_TEMPLATE
  ? { EMBEDDED_DB_TEMPLATE: process.env.EMBEDDED_DB_TEMPLATE }
  : {};
export const TEST_PGLITE: { template?: string } = TEST_STORE_ENV.EMBEDDED_DB_TEMPLATE
  ? { template: TEST_STORE_ENV.EMBEDDED_DB_TEMPLATE }
  : {};

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
  // Names every connection to this schema, so `drop` can end those a test left open.
  url.searchParams.set('application_name', schema);
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      try {
        // A connection still open here (a child process that had not closed its pool, a
        // transaction left idle) would hold a lock DROP waits for without end: a CI run's
        // afterAll timed out so. The test is over, so its connections are ended first.
        await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
          schema,
        ]);
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}
