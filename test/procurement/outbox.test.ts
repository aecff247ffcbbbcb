/**
 * The transactional outbox of order events (issue 12): one contract suite against the memory
 * store, the embedded PGlite and the real Postgres, then what only Postgres can show: two
 * relays (two connection pools, as two procurement replicas) relaying the same table under
 * load, each row exactly once; a relay restarted after a crash; a failing bus.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import type { CloudEvent } from '../../lib/events/cloudevent.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import { createOrderDomain, newOrderId } from '../../subgraphs/procurement/domain/order-domain.ts';
import type { OutboxEvent } from '../../subgraphs/procurement/outbox/order-events.ts';
import { createOutboxRelay } from '../../subgraphs/procurement/outbox/relay.ts';
import { sqlOrderStore, sqlOutbox } from '../../subgraphs/procurement/store/sql.ts';
import { eventSchema, eventually } from '../pricing/support.ts';
import { drain, type OrderDbs, openOrderDbs, outboxAdapters } from '../support/order-stores.ts';
import { vacuumCount } from '../support/vacuums.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const WINDOW_MS = 3_600_000;
const quiet = { warn() {}, error() {} };
const placedSchema = eventSchema('order-placed.json');
const cancelledSchema = eventSchema('order-cancelled.json');

let n = 0;
const request = (over: Partial<{ agent_id: string; quantity: number; max_budget_usd: string }> = {}) =>
  Object.freeze({
    agent_id: `agent-${String(++n).padStart(7, '0')}`,
    sku: 'SKU-ABC-123456',
    quantity: 2,
    ...over,
    max_budget_usd: (over.max_budget_usd ?? '250.5') as UsdAmount,
  });

let dbs: OrderDbs;
let db: Db;
let db2: Db;
let lite: Db;
beforeAll(async () => {
  dbs = await openOrderDbs('outbox');
  ({ db, lite } = dbs);
  db2 = await openPostgres(dbs.url);
});
afterAll(async () => {
  await db2?.close();
  await dbs?.close();
});

const adapters = outboxAdapters(() => dbs);

describe.each(adapters)('outbox contract, %s', (_name, open) => {
  it('writes one OrderPlaced per stored order: REST shape, exact amount as text, subject = order id', async () => {
    const { store, outbox } = await open();
    const clock = new ManualClock(1_767_225_600_250);
    const domain = createOrderDomain(store, clock);
    const created = await domain.place({
      request: request({ max_budget_usd: '4999.99' }),
      spiffeId: `${AGENT}/eu-1`,
      traceId: 't',
    });
    const [event, ...rest] = await drain(outbox);
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      type: EventTypes.OrderPlaced,
      subject: created.order_id,
      time: '2026-01-01T00:00:00.250Z',
      data: {
        order_id: created.order_id,
        status: 'APPROVED',
        spiffe_id: `${AGENT}/eu-1`,
        sku: 'SKU-ABC-123456',
        quantity: 2,
        allocated_budget: '4999.99',
        processed_at: 1_767_225_600.25,
        cancelled_at: null,
      },
    });
    const { toCloudEvent } = await import('../../subgraphs/procurement/outbox/order-events.ts');
    expect(placedSchema(toCloudEvent(event as OutboxEvent)), JSON.stringify(placedSchema.errors)).toBe(true);
  });

  it('writes no second OrderPlaced when an existing order id is placed again (idempotent retry)', async () => {
    const { store, outbox } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    const orderId = newOrderId();
    const cmd = { request: request(), spiffeId: AGENT, traceId: 't', orderId };
    await Promise.all([domain.place(cmd), domain.place(cmd), domain.place(cmd)]);
    await domain.place(cmd);
    expect((await drain(outbox)).map((e) => e.subject)).toEqual([orderId]);
  });

  it('writes one OrderCancelled on the first cancel and none on the next ones', async () => {
    const { store, outbox } = await open();
    const clock = new ManualClock();
    const domain = createOrderDomain(store, clock, { cancelWindowMs: WINDOW_MS });
    const o = await domain.place({ request: request(), spiffeId: AGENT, traceId: 't' });
    clock.advance(1000);
    const outcomes = await Promise.all([1, 2, 3].map(() => domain.cancel(o.order_id, AGENT)));
    expect(outcomes.filter((r) => r.kind === 'cancelled' && r.first)).toHaveLength(1);
    expect((await domain.cancel(o.order_id, AGENT)).kind).toBe('cancelled');
    const events = await drain(outbox);
    expect(events.map((e) => e.type)).toEqual([EventTypes.OrderPlaced, EventTypes.OrderCancelled]);
    const { toCloudEvent } = await import('../../subgraphs/procurement/outbox/order-events.ts');
    const cancelled = toCloudEvent(events[1] as OutboxEvent);
    expect(cancelledSchema(cancelled), JSON.stringify(cancelledSchema.errors)).toBe(true);
    expect(cancelled.data).toMatchObject({ status: 'CANCELLED', cancelled_at: clock.now() / 1000 });
  });

  it('claims at most the batch size per pass, oldest first, and stops at a failing publish', async () => {
    const { store, outbox } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await domain.place({ request: request(), spiffeId: AGENT, traceId: 't' })).order_id);
    const first: string[] = [];
    const pass = await outbox.relay(3, async (e) => void first.push(e.subject));
    expect(pass).toEqual({ relayed: 3, full: true });
    expect(first).toEqual(ids.slice(0, 3));
    let calls = 0;
    const failed = await outbox.relay(3, async () => {
      if (++calls === 2) throw new Error('bus down');
    });
    expect(failed.relayed).toBe(1);
    expect(failed.error).toBeInstanceOf(Error);
    // The row it failed on is still there, with those after it.
    expect((await drain(outbox)).map((e) => e.subject)).toEqual(ids.slice(4));
  });
});

describe.each([
  ['Postgres', () => db],
  ['embedded PGlite', () => lite],
])('no event without its order, %s', (_name, dbOf) => {
  it('stores no event for an order the store refused (CHECK constraint)', async () => {
    await drain(sqlOutbox(dbOf()));
    const domain = createOrderDomain(sqlOrderStore(dbOf()), new ManualClock());
    await expect(
      domain.place({ request: request({ quantity: 101 }), spiffeId: AGENT, traceId: 'x' }),
    ).rejects.toThrow();
    expect(await drain(sqlOutbox(dbOf()))).toEqual([]);
  });

  it('stores no order when its outbox row cannot be written (one statement)', async () => {
    const real = dbOf();
    await drain(sqlOutbox(real));
    // The store itself refuses the outbox row, as a full disk or a broken constraint would.
    await real.exec(`CREATE FUNCTION refuse_outbox_row() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected: outbox write failed'; END $$;
      CREATE TRIGGER refuse_outbox_row BEFORE INSERT ON procurement_outbox
        FOR EACH ROW EXECUTE FUNCTION refuse_outbox_row();`);
    try {
      const domain = createOrderDomain(sqlOrderStore(real), new ManualClock());
      const orderId = newOrderId();
      await expect(
        domain.place({ request: request(), spiffeId: AGENT, traceId: 'x', orderId }),
      ).rejects.toThrow(/outbox write failed/);
      expect(await domain.get(orderId)).toBeNull();
    } finally {
      await real.exec(
        'DROP TRIGGER refuse_outbox_row ON procurement_outbox; DROP FUNCTION refuse_outbox_row();',
      );
    }
    expect(await drain(sqlOutbox(real))).toEqual([]);
  });
});

describe.each([
  ['Postgres', () => db],
  ['embedded PGlite', () => lite],
])('relay order and upkeep, %s', (name, dbOf) => {
  it('claims oldest first by sequence number, also where the number gains a digit', async () => {
    const real = dbOf();
    await drain(sqlOutbox(real));
    const [{ max }] = (await real.query<{ max: string | null }>(
      'SELECT max(seq)::text AS max FROM procurement_outbox',
    )) as [{ max: string | null }];
    expect(Number(max ?? 0)).toBeLessThan(999_999_997);
    await real.query("SELECT setval(pg_get_serial_sequence('procurement_outbox', 'seq'), 999999997)");
    const domain = createOrderDomain(sqlOrderStore(real), new ManualClock());
    const ids: string[] = [];
    // Rows 999,999,998 to 1,000,000,001: as text, "1000000000" sorts before "999999998".
    for (let i = 0; i < 4; i++)
      ids.push((await domain.place({ request: request(), spiffeId: AGENT, traceId: 't' })).order_id);
    const first: string[] = [];
    expect(await sqlOutbox(real).relay(2, async (e) => void first.push(e.subject))).toEqual({
      relayed: 2,
      full: true,
    });
    expect(first).toEqual(ids.slice(0, 2));
    expect((await drain(sqlOutbox(real))).map((e) => e.subject)).toEqual(ids.slice(2));
  });

  it.runIf(name === 'embedded PGlite')(
    'vacuums the outbox itself after 1,000 relayed rows (PGlite runs no autovacuum)',
    async () => {
      const real = dbOf();
      const outbox = sqlOutbox(real);
      await drain(outbox);
      const vacuums = () => vacuumCount(real, 'procurement_outbox');
      const before = await vacuums();
      await real.query(
        `INSERT INTO procurement_outbox (event_id, type, subject, time, data)
         SELECT 'upkeep-' || g, 'OrderPlaced', 'order-' || g, '2026-01-01T00:00:00Z', '{}'::jsonb
         FROM generate_series(1, 999) g`,
      );
      expect(await drain(outbox)).toHaveLength(999);
      expect(await vacuums()).toBe(before);
      await real.query(
        "INSERT INTO procurement_outbox (event_id, type, subject, time, data) VALUES ('upkeep-1000', 'OrderPlaced', 'order-1000', '2026-01-01T00:00:00Z', '{}'::jsonb)",
      );
      expect(await drain(outbox)).toHaveLength(1);
      expect(await vacuums()).toBe(before + 1);
    },
  );
});

describe('relays on the real Postgres', () => {
  it('relays every row exactly once with two relays (two pools) working the table under load', async () => {
    await drain(sqlOutbox(db));
    const seen: Record<'a' | 'b', CloudEvent[]> = { a: [], b: [] };
    // A publish that yields, so the two relays' transactions overlap.
    const into = (list: CloudEvent[]) => async (e: CloudEvent) => {
      await new Promise((r) => setTimeout(r, 1));
      list.push(e);
    };
    const relays = [
      createOutboxRelay({
        outbox: sqlOutbox(db),
        publish: into(seen.a),
        log: quiet,
        batchSize: 7,
        pollMs: 50,
      }),
      createOutboxRelay({
        outbox: sqlOutbox(db2),
        publish: into(seen.b),
        log: quiet,
        batchSize: 7,
        pollMs: 50,
      }),
    ];
    const domain = createOrderDomain(sqlOrderStore(db), new ManualClock(), {
      cancelWindowMs: WINDOW_MS,
      committed: () => {
        for (const r of relays) r.wake();
      },
    });
    const placed = await Promise.all(
      Array.from({ length: 200 }, () =>
        domain.place({ request: request(), spiffeId: AGENT, traceId: 'load' }),
      ),
    );
    await Promise.all(placed.slice(0, 40).map((o) => domain.cancel(o.order_id, AGENT)));
    const expected = 240;
    await eventually(async () => {
      for (const r of relays) r.wake();
      await Promise.all(relays.map((r) => r.idle()));
      expect(seen.a.length + seen.b.length).toBeGreaterThanOrEqual(expected);
    });
    await Promise.all(relays.map((r) => r.stop()));
    const all = [...seen.a, ...seen.b];
    expect(all).toHaveLength(expected);
    expect(new Set(all.map((e) => e.id)).size).toBe(expected);
    const placedEvents = all.filter((e) => e.type === EventTypes.OrderPlaced).map((e) => e.subject);
    expect(new Set(placedEvents)).toEqual(new Set(placed.map((o) => o.order_id)));
    expect(all.filter((e) => e.type === EventTypes.OrderCancelled)).toHaveLength(40);
  });

  it('publishes after a crash between commit and relay, and again with the same ids after one between publish and mark', async () => {
    await drain(sqlOutbox(db));
    // Committed while no relay ran (the process died right after the commits).
    const domain = createOrderDomain(sqlOrderStore(db), new ManualClock());
    const ids = await Promise.all(
      [1, 2, 3].map(
        async () => (await domain.place({ request: request(), spiffeId: AGENT, traceId: 'c' })).order_id,
      ),
    );
    // A relay that dies after publishing, before its mark commits: nothing is marked.
    const lost: CloudEvent[] = [];
    const dying = createOutboxRelay({
      outbox: sqlOutbox(db),
      publish: async (e) => {
        lost.push(e);
        throw new Error('process killed');
      },
      log: quiet,
      batchSize: 10,
      pollMs: 60_000,
    });
    await eventually(() => expect(lost.length).toBeGreaterThan(0));
    await dying.stop();
    // The restarted process's relay: its first pass (at start) publishes what is waiting.
    const got: CloudEvent[] = [];
    const restarted = createOutboxRelay({
      outbox: sqlOutbox(db2),
      publish: async (e) => void got.push(e),
      log: quiet,
      batchSize: 10,
      pollMs: 60_000,
    });
    await eventually(() => expect(got).toHaveLength(3));
    await restarted.stop();
    expect(new Set(got.map((e) => e.subject))).toEqual(new Set(ids));
    const again = got.find((e) => e.subject === lost[0]?.subject);
    expect(again?.id).toBe(lost[0]?.id);
    expect(await drain(sqlOutbox(db))).toEqual([]);
  });

  it('retries after the bus fails, with backoff, until every event is out once', async () => {
    await drain(sqlOutbox(db));
    const out: CloudEvent[] = [];
    let failures = 0;
    const relay = createOutboxRelay({
      outbox: sqlOutbox(db),
      publish: async (e) => {
        if (failures < 3) {
          failures++;
          throw new Error('bus unavailable');
        }
        out.push(e);
      },
      log: quiet,
      batchSize: 10,
      pollMs: 60_000,
    });
    const domain = createOrderDomain(sqlOrderStore(db), new ManualClock(), {
      cancelWindowMs: WINDOW_MS,
      committed: relay.wake,
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await domain.place({ request: request(), spiffeId: AGENT, traceId: 'r' })).order_id);
    await eventually(() => expect(out).toHaveLength(4));
    await relay.stop();
    expect(failures).toBe(3);
    expect(out.map((e) => e.subject)).toEqual(ids);
  });
});
