/**
 * The operator's audit search (issue 14) on every audit log: the memory ring, the embedded SQL
 * store (PGlite) and Postgres answer each query like the plain predicate `matches` over the
 * same entries, newest first; and the order id an entry carries is part of its link.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuditEntry,
  type ChainedEntry,
  GENESIS_HASH,
  linkHash,
  verifyEntries,
} from '../../gateway/agent/audit/entry.ts';
import { ephemeralAuditKeys } from '../../gateway/agent/audit/keys.ts';
import { type AuditLog, type AuditQuery, matches } from '../../gateway/agent/audit/log.ts';
import { memoryAuditLog } from '../../gateway/agent/audit/memory.ts';
import { auditMigrations } from '../../gateway/agent/audit/migrations.ts';
import { sqlAuditLog } from '../../gateway/agent/audit/sql.ts';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { createLogger } from '../../lib/logger.ts';

const log = createLogger({ LOG_LEVEL: 'silent' });
const T0 = Date.UTC(2026, 10, 23, 12);
const IDS = [
  'spiffe://example.org/ns/ai/sa/procurement-agent/a',
  'spiffe://example.org/ns/ai/sa/procurement-agent/b',
  null,
];
const ORDERS = ['ord_00000000000000000000000000000001', 'ord_00000000000000000000000000000002', null];

/** 60 entries over 60 seconds, identities and orders interleaved. */
const ENTRIES: AuditEntry[] = Array.from({ length: 60 }, (_, i) => ({
  at: T0 + i * 1000,
  traceId: `t-${i}`,
  method: i % 4 === 0 ? 'GET' : 'POST',
  path: '/api/v2/procurement/orders',
  status: i % 3 === 0 ? 201 : 422,
  durationMs: 1.5,
  identity: IDS[i % 3] ?? null,
  reason: 'ok',
  orderId: ORDERS[i % 5 === 0 ? 0 : i % 7 === 0 ? 1 : 2] ?? null,
}));

const query = fc.record(
  {
    identity: fc.constantFrom(...IDS.filter((x): x is string => x !== null), 'spiffe://example.org/other'),
    orderId: fc.constantFrom(...ORDERS.filter((x): x is string => x !== null)),
    since: fc.integer({ min: T0 - 5000, max: T0 + 65_000 }),
    until: fc.integer({ min: T0 - 5000, max: T0 + 65_000 }),
    beforeSeq: fc.integer({ min: 1, max: 65 }),
    limit: fc.integer({ min: 1, max: 70 }),
  },
  { requiredKeys: ['limit'] },
) as fc.Arbitrary<AuditQuery>;

function suite(label: string, open: () => Promise<{ audit: AuditLog; close(): Promise<void> }>) {
  describe(`audit search, ${label}`, () => {
    let audit: AuditLog;
    let close: () => Promise<void>;
    let all: ChainedEntry[];
    beforeAll(async () => {
      ({ audit, close } = await open());
      for (const e of ENTRIES) audit.append(e);
      await audit.flush();
      all = await audit.read(1, 1000);
    });
    afterAll(() => close());

    it('stores the order id with each entry', () => {
      expect(all.map((e) => e.orderId ?? null)).toEqual(ENTRIES.map((e) => e.orderId ?? null));
    });

    it('answers every query like the predicate, newest first', async () => {
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const expected = all
            .filter((e) => matches(q, e))
            .sort((a, b) => b.seq - a.seq)
            .slice(0, q.limit)
            .map((e) => e.seq);
          expect((await audit.query(q)).map((e) => e.seq)).toEqual(expected);
        }),
        { numRuns: 80 },
      );
    });
  });
}

suite('memory ring', async () => ({ audit: memoryAuditLog(), close: async () => {} }));

const sqlSuite = async (db: Db, drop?: () => Promise<void>) => {
  await migrate(db, auditMigrations);
  const audit = sqlAuditLog(db, log, { keys: ephemeralAuditKeys() });
  return {
    audit,
    async close() {
      await audit.close();
      await db.close();
      await drop?.();
    },
  };
};
suite('embedded SQL store (PGlite)', async () => sqlSuite(await openPglite(undefined, TEST_PGLITE)));
suite('Postgres', async () => {
  const pg = await freshPostgres('audit-query');
  return sqlSuite(await openPostgres(pg.url), pg.drop);
});

describe('the order id in the chain', () => {
  const keys = ephemeralAuditKeys();
  const key = keys.current();
  const base: AuditEntry = { ...(ENTRIES[0] as AuditEntry), orderId: null };
  const link = (e: AuditEntry) => linkHash(1, GENESIS_HASH, e, key);

  it('links an entry without an order id exactly as before the field existed', () => {
    const { orderId: _, ...old } = base;
    expect(link(base)).toBe(link(old));
  });

  it('changes the link when an order id is added, removed or changed', () => {
    const withOrder = { ...base, orderId: ORDERS[0] };
    expect(link(withOrder)).not.toBe(link(base));
    expect(link({ ...base, orderId: ORDERS[1] })).not.toBe(link(withOrder));
    const chained: ChainedEntry = {
      ...withOrder,
      seq: 1,
      prevHash: GENESIS_HASH,
      keyId: key.kid,
      hash: link(withOrder),
    };
    expect(verifyEntries([chained], { keyOf: keys.keyOf })).toEqual({ ok: true, entries: 1 });
    expect(verifyEntries([{ ...chained, orderId: ORDERS[1] }], { keyOf: keys.keyOf })).toMatchObject({
      ok: false,
      kind: 'altered',
    });
  });
});
