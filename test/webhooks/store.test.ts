import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { cloudEvent, EventTypes } from '../../lib/events/cloudevent.ts';
import { webhookMigrations } from '../../subgraphs/procurement/webhooks/migrations.ts';
import { sqlWebhookStore, type WebhookStore } from '../../subgraphs/procurement/webhooks/store.ts';
import { vacuumCount } from '../support/vacuums.ts';
import { orderData } from './support.ts';

/** The one store adapter runs on both SQL stores: PGlite (embedded) and Postgres (distributed). */
const adapters: [string, () => Promise<{ db: Db; drop(): Promise<void> }>][] = [
  ['PGlite', async () => ({ db: await openPglite(undefined, TEST_PGLITE), drop: async () => {} })],
  [
    'Postgres',
    async () => {
      const pg = await freshPostgres('webhook_store');
      return { db: await openPostgres(pg.url, 4), drop: pg.drop };
    },
  ],
];

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
let n = 0;
const eventOf = (type: string = EventTypes.OrderPlaced) => {
  const data = orderData(++n);
  return cloudEvent('/agent-commerce/procurement', type, data, data.order_id, T0);
};

describe.each(adapters)('the webhook store on %s', (name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: WebhookStore;
  let endpointId: string;

  beforeAll(async () => {
    ({ db, drop } = await open());
    await migrate(db, webhookMigrations);
    await migrate(db, webhookMigrations); // applied once: a second start changes nothing
    store = sqlWebhookStore(db);
    endpointId = (
      await store.insertEndpoint({
        endpointId: 'whe_00000000000000000000000000000001',
        url: 'https://hooks.example.com/a',
        eventTypes: [EventTypes.OrderPlaced],
        description: null,
        secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0',
        createdAt: T0,
      })
    ).endpointId;
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('enqueues one delivery per (endpoint, event) however often the event arrives, none for other types', async () => {
    const e = eventOf();
    expect(await store.enqueue(e, T0)).toBe(1);
    expect(await store.enqueue(e, T0)).toBe(0);
    expect(await store.enqueue(eventOf(EventTypes.OrderCancelled), T0)).toBe(0);
    const rows = await store.listDeliveries({ endpointId, limit: 10 });
    expect(rows.filter((d) => d.eventId === e.id)).toHaveLength(1);
    // The payload is the event's JSON text, exactly.
    const [claimed] = await store.claimDue(at(1), at(60_000), 10);
    expect(claimed?.payload).toBe(JSON.stringify(e));
    await store.record(claimed as NonNullable<typeof claimed>, { kind: 'delivered', statusCode: 200 }, at(2));
  });

  it('claims only due deliveries, holds them for the lease, and fences outcomes by claim', async () => {
    const e = eventOf();
    await store.enqueue(e, at(10_000));
    expect(await store.claimDue(at(9_999), at(20_000), 10)).toEqual([]);
    const [first] = await store.claimDue(at(10_000), at(70_000), 10);
    expect(first).toMatchObject({ eventId: e.id, attempt: 1, url: 'https://hooks.example.com/a' });
    expect(await store.claimDue(at(69_999), at(80_000), 10)).toEqual([]);
    expect((await store.nextDueAt())?.toISOString()).toBe(at(70_000).toISOString());
    const [second] = await store.claimDue(at(70_000), at(130_000), 10);
    expect(second).toMatchObject({ eventId: e.id, attempt: 2 });
    await store.record(
      first as NonNullable<typeof first>,
      { kind: 'failed', statusCode: 500, error: 'x' },
      at(1),
    );
    await store.record(
      second as NonNullable<typeof second>,
      { kind: 'retry', statusCode: 503, error: 'the receiver answered 503', at: at(200_000) },
      at(71_000),
    );
    const [row] = (await store.listDeliveries({ endpointId, limit: 10 })).filter((d) => d.eventId === e.id);
    expect(row).toMatchObject({
      status: 'pending',
      attempts: 2,
      lastStatusCode: 503,
      lastError: 'the receiver answered 503',
      nextAttemptAt: at(200_000).toISOString(),
    });
  });

  it('replays a finished delivery with a fresh budget and prunes only old finished ones', async () => {
    const old = eventOf();
    await store.enqueue(old, at(-40 * 86_400_000));
    const claimed = (await store.claimDue(at(0), at(1000), 50)).find((d) => d.eventId === old.id);
    expect(claimed).toBeDefined();
    await store.record(
      claimed as NonNullable<typeof claimed>,
      { kind: 'failed', statusCode: null, error: 'timed out' },
      at(1),
    );
    const replayed = await store.replay(claimed?.deliveryId as string, at(5));
    expect(replayed).toMatchObject({ status: 'pending', attempts: 0, replays: 1, lastError: null });
    await expect(store.replay(claimed?.deliveryId as string, at(6))).rejects.toThrow(/still pending/);

    const before = (await store.listDeliveries({ endpointId, limit: 200 })).length;
    // Pending: kept, however old.
    expect(await store.prune(at(-30 * 86_400_000), 100)).toBe(0);
    const [again] = (await store.claimDue(at(10), at(1000), 50)).filter((d) => d.eventId === old.id);
    await store.record(again as NonNullable<typeof again>, { kind: 'delivered', statusCode: 204 }, at(11));
    expect(await store.prune(at(-30 * 86_400_000), 100)).toBe(1);
    const after = await store.listDeliveries({ endpointId, limit: 200 });
    expect(after).toHaveLength(before - 1);
    expect(after.find((d) => d.eventId === old.id)).toBeUndefined();
  });

  it.runIf(name === 'PGlite')(
    'vacuums the deliveries after 1,000 changed rows (PGlite runs no autovacuum)',
    async () => {
      const vacuums = () => vacuumCount(db, 'webhook_deliveries');
      // A store of its own: its count of changed rows starts at zero.
      const fresh = sqlWebhookStore(db);
      const before = await vacuums();
      // Each delivery changes twice: claimed, then its outcome. 499 of them: 998 changes.
      const deliver = async (count: number) => {
        for (let i = 0; i < count; i++) await fresh.enqueue(eventOf(), at(-1000));
        for (const d of await fresh.claimDue(at(0), at(60_000), count))
          await fresh.record(d, { kind: 'delivered', statusCode: 200 }, at(1));
      };
      await deliver(499);
      expect(await vacuums()).toBe(before);
      await deliver(1);
      expect(await vacuums()).toBe(before + 1);
    },
    60_000,
  );

  it('disables an endpoint: its pending deliveries fail, new events create none, rotation is refused', async () => {
    const e = eventOf();
    await store.enqueue(e, at(0));
    const disabled = await store.disableEndpoint(endpointId, 'disabled by an operator', at(1));
    expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'disabled by an operator' });
    const [row] = (await store.listDeliveries({ endpointId, status: 'failed', limit: 200 })).filter(
      (d) => d.eventId === e.id,
    );
    expect(row?.lastError).toBe('endpoint disabled: disabled by an operator');
    expect(await store.enqueue(eventOf(), at(2))).toBe(0);
    await expect(store.rotateSecret(endpointId, 'whsec_eA==', at(3))).rejects.toThrow(/disabled/);
    await expect(store.disableEndpoint('whe_ffffffffffffffffffffffffffffffff', 'x', at(4))).rejects.toThrow(
      /not found/,
    );
  });
});
