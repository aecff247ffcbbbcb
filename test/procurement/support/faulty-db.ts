/**
 * A real embedded SQL store (PGlite in memory) with two switches for fault tests of the order
 * domain: `failOrders` makes order inserts fail (the domain is unavailable), `holdOrders`
 * parks them until released (a call still in flight).
 */

import { TEST_PGLITE } from '../../../harness/services.ts';
import type { Db } from '../../../lib/db/index.ts';
import { openPglite } from '../../../lib/db/pglite.ts';

export interface FaultyDb extends Db {
  failOrders: boolean;
  holdOrders(): { reached: Promise<void>; release(): void };
}

export async function faultyDb(): Promise<FaultyDb> {
  const db = await openPglite(undefined, TEST_PGLITE);
  let hold: { reached: () => void; gate: Promise<void> } | undefined;
  // The order store writes a new order with its outbox row in one statement (WITH … INSERT).
  const isOrderInsert = (sql: string) => sql.includes('INSERT INTO purchase_orders');
  const fault = async (sql: string) => {
    if (!isOrderInsert(sql)) return;
    if (wrapped.failOrders) throw new Error('injected fault: order store unavailable');
    if (hold) {
      const h = hold;
      hold = undefined;
      h.reached();
      await h.gate;
    }
  };
  const wrapped: FaultyDb = {
    ...db,
    failOrders: false,
    async query<R>(sql: string, params?: readonly unknown[]) {
      await fault(sql);
      return db.query<R>(sql, params);
    },
    // Other order changes run in a transaction (with their outbox rows): the switches apply there too.
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          async query<R>(sql: string, params?: readonly unknown[]) {
            await fault(sql);
            return tx.query<R>(sql, params);
          },
        }),
      ),
    holdOrders() {
      let reached!: () => void;
      let release!: () => void;
      const r = new Promise<void>((res) => {
        reached = res;
      });
      const gate = new Promise<void>((res) => {
        release = res;
      });
      hold = { reached, gate };
      return { reached: r, release };
    },
  };
  return wrapped;
}
