/**
 * The harness's reused in-memory stores (harness/store-pool.ts): a system started after another
 * closed gets the same store, and sees it as a new one: no table, row or session state of the
 * system before, its own migrations and seeds; the closed system's view refuses every call.
 */
import { describe, expect, it } from 'vitest';
import { TEST_PGLITE } from '../../harness/services.ts';
import { leaseStore, storesOpened } from '../../harness/store-pool.ts';
import { startEmbedded } from '../../harness/system.ts';

describe('the in-process systems reuse their emptied stores', () => {
  it('a released store comes back without the tables, rows and settings of its last lease', async () => {
    const first = await leaseStore(TEST_PGLITE.template);
    await first.db.exec(`CREATE TABLE left_behind (n integer);
      INSERT INTO left_behind VALUES (1), (2);
      SET statement_timeout = '7s';
      SELECT pg_advisory_lock(42);`);
    const opened = storesOpened();
    await first.release();

    const second = await leaseStore(TEST_PGLITE.template);
    try {
      expect(storesOpened(), 'the same store, not a new one').toBe(opened);
      const tables = await second.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(tables[0]?.n).toBe(0);
      const [timeout] = await second.db.query<{ statement_timeout: string }>('SHOW statement_timeout');
      expect(timeout?.statement_timeout).toBe('0');
      const locks = await second.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'",
      );
      expect(locks[0]?.n).toBe(0);
    } finally {
      await second.release();
    }
  });

  it('a released lease refuses every call, so nothing it runs late reaches the next one', async () => {
    const lease = await leaseStore(TEST_PGLITE.template);
    await lease.release();
    await lease.release(); // idempotent
    for (const call of [
      () => lease.db.query('SELECT 1'),
      () => lease.db.exec('CREATE TABLE late (n integer)'),
      () => lease.db.transaction((tx) => tx.query('SELECT 1')),
      () => lease.db.ping(),
    ])
      await expect(call()).rejects.toThrow(/released/);
    const next = await leaseStore(TEST_PGLITE.template);
    try {
      expect(await next.db.query("SELECT to_regclass('public.late') AS t")).toEqual([{ t: null }]);
    } finally {
      await next.release();
    }
  });

  it('the next system runs its migrations and seeds again and sees nothing of the one before', async () => {
    const before = await startEmbedded();
    const seeded = await before.platform.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM promotion_rules',
    );
    expect(seeded[0]?.n).toBeGreaterThan(0);
    await before.platform.db.exec(
      `DELETE FROM promotion_rules; INSERT INTO promotion_rules (promotion_id, document, status) VALUES ('LEFT-BEHIND', '{}', 'active')`,
    );
    const opened = storesOpened();
    await before.close();
    await expect(before.platform.db.query('SELECT 1')).rejects.toThrow(/released/);

    const after = await startEmbedded();
    try {
      expect(storesOpened()).toBe(opened);
      const rules = await after.platform.db.query<{ promotion_id: string }>(
        'SELECT promotion_id FROM promotion_rules',
      );
      expect(rules.length).toBe(seeded[0]?.n);
      expect(rules.map((r) => r.promotion_id)).not.toContain('LEFT-BEHIND');
      expect((await fetch(`${after.url}/readyz`)).status).toBe(200);
    } finally {
      await after.close();
    }
  });
});
