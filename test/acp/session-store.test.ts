/**
 * The checkout session store's SQL adapter on the embedded PGlite and on PostgreSQL: its writes
 * are group-committed (several sessions' inserts and compare-and-set updates in one statement),
 * and every caller must still get its own row's outcome, exactly as one statement each would;
 * and the embedded store's cached adapter.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { cachedSessionStore, checkoutSessionStoreFor } from '../../subgraphs/procurement/checkout/cached.ts';
import { checkoutMigrations } from '../../subgraphs/procurement/checkout/migrations.ts';
import {
  type CheckoutSession,
  createSession,
  type SessionPricing,
  withStatus,
} from '../../subgraphs/procurement/checkout/session.ts';
import { sqlCheckoutSessionStore } from '../../subgraphs/procurement/checkout/sql.ts';
import type { CheckoutSessionStore } from '../../subgraphs/procurement/checkout/store.ts';

const pricing = {
  lines: [],
  discounts: [],
  rejected: [],
  problems: [],
  totals: { baseCents: 0, discountCents: 0, subtotalCents: 0, totalCents: 0 },
  quote: null,
} satisfies SessionPricing;

let serial = 0;
const session = (id = `cs_${++serial}_${Math.random().toString(36).slice(2)}`): CheckoutSession =>
  createSession(
    {
      id,
      protocol: 'acp',
      owner: 'spiffe://example.org/ns/ai/sa/a',
      agentId: 'a',
      keyId: null,
      currency: 'usd',
      region: 'US',
      items: [{ sku: 'SKU-ABC-000001', quantity: 1 }],
      codes: [],
      extensions: [],
      buyer: null,
      fulfillment: null,
      ttlMs: 60_000,
    },
    pricing,
    1_000,
  );

function storeSuite(name: string, open: () => Promise<{ db: Db; drop?: () => Promise<void> }>) {
  describe(name, () => {
    let db: Db;
    let drop: (() => Promise<void>) | undefined;
    let store: CheckoutSessionStore;
    beforeAll(async () => {
      ({ db, drop } = await open());
      await migrate(db, checkoutMigrations);
      store = sqlCheckoutSessionStore(db);
    });
    afterAll(async () => {
      await db.close();
      await drop?.();
    });

    it('inserts a new id once and reads it back', async () => {
      const s = session();
      expect(await store.insert(s)).toBe(true);
      expect(await store.insert({ ...s, status: 'canceled' })).toBe(false);
      expect(await store.get(s.id)).toEqual(s);
    });

    it('writes a change only over the version it was computed from', async () => {
      const s = session();
      await store.insert(s);
      const next = withStatus(s, 'canceled', 2_000);
      expect(await store.replace(next)).toBe(true);
      expect(await store.replace(next)).toBe(false);
      expect(await store.replace(withStatus(s, 'completed', 3_000))).toBe(false);
      expect(await store.get(s.id)).toEqual(next);
    });

    it('removes the sessions named, and only those (the warm-up leaves no row)', async () => {
      const [a, b, c] = [session(), session(), session()];
      for (const s of [a, b, c]) await store.insert(s);
      expect(await store.remove([a.id, c.id, 'cs_unknown'])).toBe(2);
      expect(await store.get(a.id)).toBeNull();
      expect(await store.get(c.id)).toBeNull();
      expect(await store.get(b.id)).toEqual(b);
      expect(await store.remove([])).toBe(0);
    });

    it("removes the warm-up's sessions a crash left (an old one of the reserved identity), no other", async () => {
      const warm = 'spiffe://example.org/ns/ai/sa/procurement-agent/warm-up';
      const old = { ...session(), owner: warm, updatedAt: 1_000 };
      const fresh = { ...session(), owner: warm, updatedAt: 9_000 };
      const other = { ...session(), updatedAt: 1_000 };
      for (const s of [old, fresh, other]) await store.insert(s);
      expect(await store.removeRehearsedBefore(5_000)).toBe(1);
      expect(await store.get(old.id)).toBeNull();
      expect(await store.get(fresh.id)).toEqual(fresh);
      expect(await store.get(other.id)).toEqual(other);
    });

    it('in one batch: many sessions, each write with its own outcome', async () => {
      const made = Array.from({ length: 40 }, () => session());
      // All issued in one turn: they are written by one or two statements.
      const inserted = await Promise.all(made.map((s) => store.insert(s)));
      expect(inserted).toEqual(made.map(() => true));
      const changes = made.map((s, i) => (i % 2 ? withStatus(s, 'canceled', 2_000) : { ...s, version: 5 }));
      const replaced = await Promise.all(changes.map((c) => store.replace(c)));
      expect(replaced).toEqual(changes.map((_, i) => i % 2 === 1));
      for (const [i, s] of made.entries()) expect((await store.get(s.id))?.version).toBe(i % 2 ? 1 : 0);
    });

    it('in one batch of reads: each id its own row, an unknown one null, an id asked twice twice', async () => {
      const made = Array.from({ length: 25 }, () => session());
      await Promise.all(made.map((s) => store.insert(s)));
      const ids = [...made.map((s) => s.id), 'cs_unknown', made[0]?.id as string];
      // All asked in one turn: read by one or two statements.
      const read = await Promise.all(ids.map((id) => store.get(id)));
      expect(read).toEqual([...made, null, made[0]]);
      // Each caller its own object: one caller's copy is not another's.
      expect(read[0]).not.toBe(read.at(-1));
      // A read asked after a write was answered sees it.
      const next = withStatus(made[1] as CheckoutSession, 'canceled', 2_000);
      await store.replace(next);
      expect(await store.get(next.id)).toEqual(next);
    });

    it('racing writes of one session in one batch: exactly one wins, whichever way they are mixed', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom('insert', 'replace-0', 'replace-1', 'replace-stale'), {
            minLength: 1,
            maxLength: 8,
          }),
          fc.boolean(),
          async (kinds, exists) => {
            const s = session();
            if (exists) await store.insert(s);
            // Each write of one kind is a different document, so the stored one tells who won.
            const writes = kinds.map((k, n) => {
              const tagged = { ...s, purchaseOrderNumber: `w${n}` };
              if (k === 'insert') return () => store.insert(tagged);
              if (k === 'replace-0') return () => store.replace({ ...tagged, version: 1 });
              if (k === 'replace-1') return () => store.replace({ ...tagged, version: 2 });
              return () => store.replace({ ...tagged, version: 0 });
            });
            const outcomes = await Promise.all(writes.map((w) => w()));
            // Sequentially: the insert wins iff none existed and it is the first insert; a
            // replace over version v wins iff the stored version is v when its turn comes.
            let version: number | null = exists ? 0 : null;
            let winner: string | null = null;
            const expected = kinds.map((k, n) => {
              if (k === 'insert') {
                if (version !== null) return false;
                version = 0;
                winner = `w${n}`;
                return true;
              }
              const over = k === 'replace-0' ? 0 : k === 'replace-1' ? 1 : -1;
              if (version === null || version !== over) return false;
              version = over + 1;
              winner = `w${n}`;
              return true;
            });
            expect(outcomes).toEqual(expected);
            const stored = await store.get(s.id);
            expect(stored?.version ?? null).toBe(version);
            expect(stored?.purchaseOrderNumber ?? null).toBe(winner);
          },
        ),
        { numRuns: 60 },
      );
    });
  });
}

storeSuite('embedded (PGlite)', async () => ({ db: await openPglite(undefined, TEST_PGLITE) }));

/**
 * The embedded store's cached adapter, where this process is the only writer: a completion's
 * mark held in memory only, and its final version written behind the answer (cached.ts).
 */
describe('the cached store (embedded: one process, one writer)', () => {
  let db: Db;
  let table: CheckoutSessionStore;
  beforeAll(async () => {
    db = await openPglite(undefined, TEST_PGLITE);
    await migrate(db, checkoutMigrations);
    table = sqlCheckoutSessionStore(db);
  });
  afterAll(() => db.close());
  const mark = (s: CheckoutSession) =>
    withStatus(s, 'complete_in_progress', 2_000, { purchaseOrderNumber: 'PO-1', completingUntil: 9_000 });

  it('holds a mark in memory only: reads get it, the row (and a restart) does not', async () => {
    const store = cachedSessionStore(table);
    const s = session();
    await store.insert(s);
    const held = mark(s);
    expect(await store.hold?.(held)).toBe(true);
    expect(await store.get(s.id)).toEqual(held);
    expect(await table.get(s.id)).toEqual(s);
    // What a crash leaves: a new process reads the session as it was before the mark.
    expect(await cachedSessionStore(table).get(s.id)).toEqual(s);
    // A second mark computed from the same version loses, as a second writer of the row would.
    expect(await store.hold?.({ ...mark(s), purchaseOrderNumber: 'PO-2' })).toBe(false);
  });

  it('writes the change after a held mark over the version the row holds', async () => {
    const store = cachedSessionStore(table);
    const s = session();
    await store.insert(s);
    const held = mark(s);
    expect(await store.hold?.(held)).toBe(true);
    const done = withStatus(held, 'completed', 3_000, { orderId: 'ord_1' });
    expect(await store.replace(done)).toBe(true);
    expect(await table.get(s.id)).toEqual(done);
    expect(await store.get(s.id)).toEqual(done);
    // A change from a version that is gone is refused, in memory as in the row.
    expect(await store.replace(withStatus(held, 'canceled', 4_000))).toBe(false);
    expect(await table.get(s.id)).toEqual(done);
  });

  it('makes a change behind visible at once, and writes it, in order with the changes after it', async () => {
    const store = cachedSessionStore(table);
    const s = session();
    await store.insert(s);
    const held = mark(s);
    await store.hold?.(held);
    const done = withStatus(held, 'completed', 3_000, { orderId: 'ord_2' });
    const written = store.replaceBehind?.(done);
    expect(written).toBeInstanceOf(Promise);
    expect(await store.get(s.id)).toEqual(done);
    // Asked for before the write behind landed: written after it, over its version.
    const later = withStatus(done, 'completed', 4_000, { problems: [] });
    const after = store.replace(later);
    expect(await written).toBe(true);
    expect(await after).toBe(true);
    await store.settled?.();
    expect(await table.get(s.id)).toEqual(later);
    // Nothing is done for a change that is not over the version known here.
    expect(store.replaceBehind?.(withStatus(done, 'canceled', 5_000))).toBe(false);
  });

  it('removes a session after its write behind landed, from memory and the row', async () => {
    const store = cachedSessionStore(table);
    const s = session();
    await store.insert(s);
    await store.hold?.(mark(s));
    // Not awaited: the remove must wait for it, or the write would bring the row back.
    void store.replaceBehind?.(withStatus(mark(s), 'completed', 3_000, { orderId: 'ord_9' }));
    expect(await store.remove([s.id])).toBe(1);
    expect(await store.get(s.id)).toBeNull();
    expect(await table.get(s.id)).toBeNull();
  });

  it('forgets a change behind whose write lost (the row was changed by another writer)', async () => {
    const store = cachedSessionStore(table);
    const s = session();
    await store.insert(s);
    const other = withStatus(s, 'canceled', 2_500);
    await table.replace(other);
    const done = withStatus(s, 'completed', 3_000, { orderId: 'ord_3' });
    const written = store.replaceBehind?.(done);
    expect(await written).toBe(false);
    expect(await store.get(s.id)).toEqual(other);
  });

  it('tries a failed write behind again, and keeps the answered session in memory when it fails twice', async () => {
    let failures = 0;
    const flaky: CheckoutSessionStore = {
      ...table,
      replace: (next, over) =>
        failures-- > 0 ? Promise.reject(new Error('store gone')) : table.replace(next, over),
    };
    const store = cachedSessionStore(flaky);
    const once = session();
    await store.insert(once);
    failures = 1;
    const done = withStatus(once, 'completed', 3_000, { orderId: 'ord_4' });
    expect(await store.replaceBehind?.(done)).toBe(true);
    expect(await table.get(once.id)).toEqual(done);
    expect(await store.settled?.()).toBe(true);

    const twice = session();
    await store.insert(twice);
    failures = 2;
    const answered = withStatus(twice, 'completed', 3_000, { orderId: 'ord_5' });
    await expect(store.replaceBehind?.(answered)).rejects.toThrow('store gone');
    expect(await table.get(twice.id)).toEqual(twice);
    // Reads stay what was answered; the store is not clean (the next start mends the row).
    expect(await store.get(twice.id)).toEqual(answered);
    expect(await store.settled?.()).toBe(false);
    // The next change is written over the version the row still holds.
    const later = withStatus(answered, 'completed', 4_000, { problems: [] });
    expect(await store.replace(later)).toBe(true);
    expect(await table.get(twice.id)).toEqual(later);
  });

  it('is one store per database, cached only for the embedded one', async () => {
    expect(checkoutSessionStoreFor(db)).toBe(checkoutSessionStoreFor(db));
    expect(checkoutSessionStoreFor(db).hold).toBeTypeOf('function');
  });
});
storeSuite('PostgreSQL', async () => {
  const pg = await freshPostgres('checkout-sessions');
  return { db: await openPostgres(pg.url), drop: pg.drop };
});
