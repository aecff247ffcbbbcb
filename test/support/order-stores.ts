/**
 * The order domain's stores in tests that run the same cases on each: the memory store and the
 * two SQL databases it runs on (a fresh schema of the test Postgres and an embedded PGlite, each
 * migrated to the order tables), and the outbox drained between tests.
 */
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import type { OutboxEvent } from '../../subgraphs/procurement/outbox/order-events.ts';
import { memoryOrderStore } from '../../subgraphs/procurement/store/memory.ts';
import { orderMigrations } from '../../subgraphs/procurement/store/migrations.ts';
import { sqlOrderStore, sqlOutbox } from '../../subgraphs/procurement/store/sql.ts';
import type { OrderStore, OutboxStore } from '../../subgraphs/procurement/store/store.ts';

export interface OrderDbs {
  /** The Postgres schema's URL (another connection to the same tables). */
  readonly url: string;
  /** Postgres. */
  readonly db: Db;
  /** Embedded PGlite, in memory. */
  readonly lite: Db;
  /** Closes both and drops the schema. */
  close(): Promise<void>;
}

/** Opens and migrates both; `label` names the Postgres schema (`t_<label>_…`). */
export async function openOrderDbs(label: string): Promise<OrderDbs> {
  const pg = await freshPostgres(label);
  const db = await openPostgres(pg.url);
  await migrate(db, orderMigrations);
  const lite = await openPglite(undefined, TEST_PGLITE);
  await migrate(lite, orderMigrations);
  return {
    url: pg.url,
    db,
    lite,
    async close() {
      await db.close();
      await lite.close();
      await pg.drop();
    },
  };
}

/** Relays everything pending, pass after pass (50 a pass); the events relayed, in order. */
export async function drain(outbox: OutboxStore): Promise<OutboxEvent[]> {
  const out: OutboxEvent[] = [];
  for (;;) {
    const r = await outbox.relay(50, async (e) => void out.push(e));
    if (r.error !== undefined) throw r.error;
    if (!r.full) return out;
  }
}

/** Opens a store and its outbox, empty of earlier tests' events. */
export type OutboxAdapter = () => Promise<{ store: OrderStore; outbox: OutboxStore }>;

/**
 * The store with its outbox on memory (new each time), embedded PGlite and Postgres (shared,
 * drained first), named for `describe.each`; `dbs` is read when an adapter is called.
 */
export function outboxAdapters(dbs: () => Pick<OrderDbs, 'db' | 'lite'>): [string, OutboxAdapter][] {
  return [
    [
      'memory',
      async () => {
        const m = memoryOrderStore();
        return { store: m, outbox: m.outbox };
      },
    ],
    [
      'embedded PGlite',
      async () => {
        const { lite } = dbs();
        await drain(sqlOutbox(lite));
        return { store: sqlOrderStore(lite), outbox: sqlOutbox(lite) };
      },
    ],
    [
      'Postgres',
      async () => {
        const { db } = dbs();
        await drain(sqlOutbox(db));
        return { store: sqlOrderStore(db), outbox: sqlOutbox(db) };
      },
    ],
  ];
}
