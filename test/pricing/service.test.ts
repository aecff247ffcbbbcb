import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PGLITE, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { ManualClock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import type { EventBus } from '../../lib/events/bus.ts';
import { type CloudEvent, EventTypes } from '../../lib/events/cloudevent.ts';
import { createMemoryBus } from '../../lib/events/memory.ts';
import { createRedisStreamsBus } from '../../lib/events/redis-streams.ts';
import { createRedis, type RedisClient } from '../../lib/redis.ts';
import { createMemoryPriceCache } from '../../subgraphs/pricing/cache/memory.ts';
import type { PriceCache } from '../../subgraphs/pricing/cache/price-cache.ts';
import { createRedisPriceCache } from '../../subgraphs/pricing/cache/redis.ts';
import { type Catalog, createSqlCatalog, seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { NoBasePrice, UnknownSku } from '../../subgraphs/pricing/domain/errors.ts';
import type { PriceContext } from '../../subgraphs/pricing/domain/types.ts';
import {
  createPricingService,
  newCounters,
  type PriceResult,
  type PricingService,
} from '../../subgraphs/pricing/service.ts';
import { deferred, eventSchema, eventually } from './support.ts';

const ctx = (over: Partial<PriceContext> = {}): PriceContext => ({
  sku: 'SKU-ABC-000001',
  currency: 'USD',
  region: 'EU',
  customerSegment: 'VIP',
  inventoryLevel: 5,
  ...over,
});
const silent = { error: () => {}, warn: () => {} };

let db: Db;
const redisClients: RedisClient[] = [];
const prefixes: string[] = [];
beforeAll(async () => {
  db = await openPglite(undefined, TEST_PGLITE);
  await migrateCatalog(db);
  await seedCatalog(db, 300);
});
afterAll(async () => {
  await db.close();
  const admin = createRedis({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER: false });
  for (const p of prefixes) {
    const keys = await admin.keys(`${p}*`);
    if (keys.length) await admin.del(...keys);
  }
  admin.disconnect();
  for (const c of redisClients) c.disconnect();
});

/** Shared state of a topology: the cache and bus every instance of it sees. */
interface Topology {
  /** A new instance's cache (shared with the others in Redis; its own in memory). */
  cache(clock: ManualClock): PriceCache;
  /** A new instance's bus connection onto the shared channel. */
  bus(): Promise<EventBus>;
}

function memoryTopology(): Topology {
  const bus = createMemoryBus('/test/pricing', () => {});
  return { cache: (clock) => createMemoryPriceCache(clock), bus: async () => bus };
}

function redisTopology(): Topology {
  const prefix = uniquePrefix('pricing-svc');
  prefixes.push(prefix);
  const client = (use: 'commands' | 'blocking' = 'commands') => {
    const c = createRedis({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER: false }, use);
    redisClients.push(c);
    return c;
  };
  const shared = client();
  return {
    cache: (clock) => createRedisPriceCache(shared, prefix, clock),
    async bus() {
      const bus = createRedisStreamsBus({
        source: '/test/pricing',
        stream: `${prefix}events`,
        publisher: shared,
        reader: client('blocking'),
        onError: () => {},
      });
      await bus.ready;
      return bus;
    },
  };
}

/** The SQL catalog, counting lookups, optionally held at a gate to interleave concurrent work. */
function gatedCatalog(inner: Catalog) {
  const state = { lookups: 0, gate: undefined as Promise<void> | undefined };
  const catalog: Catalog = {
    ...inner,
    async basePrices(requests) {
      state.lookups++;
      if (state.gate) await state.gate;
      return inner.basePrices(requests);
    },
  };
  return { catalog, state };
}

describe.each([
  ['in memory', memoryTopology],
  ['on Redis (cache and Redis Streams)', redisTopology],
])('pricing service %s', (_name, topology) => {
  let top: Topology;
  let clock: ManualClock;
  let gate: ReturnType<typeof gatedCatalog>;
  let service: PricingService;
  let events: CloudEvent[];
  const services: PricingService[] = [];

  const instance = async (catalog: Catalog = createSqlCatalog(db)) => {
    const s = createPricingService({
      catalog,
      cache: top.cache(clock),
      bus: await top.bus(),
      clock,
      log: silent,
      counters: newCounters(),
    });
    services.push(s);
    return s;
  };

  beforeAll(async () => {
    top = topology();
    clock = new ManualClock();
    gate = gatedCatalog(createSqlCatalog(db));
    service = await instance(gate.catalog);
    events = [];
    (await top.bus()).subscribe(EventTypes.PriceCalculated, (e) => {
      events.push(e);
    });
  });
  afterAll(() => {
    for (const s of services) s.close();
  });

  it('emits one schema-valid PriceCalculated per miss and none on a hit', async () => {
    const validate = eventSchema('price-calculated.json');
    const c = ctx({ region: 'events' });
    const miss = await service.calculate(c);
    const hit = await service.calculate({ ...c, currency: 'EUR', inventoryLevel: 1000 });
    expect([miss.cache, hit.cache]).toEqual(['MISS', 'HIT']);
    expect(hit.json).toBe(miss.json);
    const mine = await eventually(() => {
      const found = events.filter((e) => (e.data as { region: string }).region === 'events');
      expect(found).toHaveLength(1);
      return found;
    });
    const event = mine[0] as CloudEvent;
    expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    expect(event.data).toEqual({
      ...miss.response,
      region: 'events',
      customerSegment: 'VIP',
      inventoryLevel: 5,
    });
    expect(event.subject).toBe('SKU-ABC-000001');
  });

  it('computes concurrent misses for one key once: one lookup, one MISS, one event', async () => {
    const c = ctx({ region: 'stampede' });
    const before = { lookups: gate.state.lookups, misses: service.counters.misses };
    const results = await Promise.all(Array.from({ length: 50 }, () => service.calculate(c)));
    expect(gate.state.lookups - before.lookups).toBe(1);
    expect(service.counters.misses - before.misses).toBe(1);
    expect(results.filter((r) => r.cache === 'MISS')).toHaveLength(1);
    expect(new Set(results.map((r) => r.json)).size).toBe(1);
    await eventually(() =>
      expect(events.filter((e) => (e.data as { region: string }).region === 'stampede')).toHaveLength(1),
    );
  });

  it('prices a batch with one cache round trip and one catalog query, errors per item', async () => {
    const skus = ['SKU-ABC-000002', 'SKU-ELC-000001', 'SKU-TOY-000001', 'SKU-TOL-000002'];
    const batch = [
      ...skus.map((sku) => ctx({ sku, region: 'batch' })),
      ctx({ sku: 'SKU-NOP-000001', region: 'batch' }),
      ctx({ sku: 'SKU-ABC-000002', region: 'batch-jpy', currency: 'JPY' }),
    ];
    const before = { lookups: gate.state.lookups, trips: service.counters.cacheRoundTrips };
    const results = await service.calculateMany(batch);
    expect(gate.state.lookups - before.lookups).toBe(1);
    // One read for the batch, one write of what it computed; a shared cache also reads the
    // SKUs' versions before the catalog (one round trip for the batch).
    const shared = top.cache(clock).versions !== undefined;
    expect(service.counters.cacheRoundTrips - before.trips).toBe(shared ? 3 : 2);
    expect(results.slice(0, 4).map((r) => (r instanceof Error ? r : r.cache))).toEqual([
      'MISS',
      'MISS',
      'MISS',
      'MISS',
    ]);
    expect(results[4]).toBeInstanceOf(UnknownSku);
    expect(results[5]).toBeInstanceOf(NoBasePrice);
    const again = await service.calculateMany(batch.slice(0, 4));
    expect(again.map((r) => (r instanceof Error ? r : r.cache))).toEqual(['HIT', 'HIT', 'HIT', 'HIT']);
  });

  it('does not store a price whose SKU was invalidated while it was being computed', async () => {
    const c = ctx({ region: 'race' });
    const held = deferred();
    gate.state.gate = held.promise;
    const lookups = gate.state.lookups;
    const computing = service.calculate(c);
    await eventually(() => expect(gate.state.lookups).toBe(lookups + 1));
    await service.invalidate([c.sku]);
    gate.state.gate = undefined;
    held.resolve();
    expect((await computing).cache).toBe('MISS');
    expect((await service.calculate(c)).cache).toBe('MISS');
  });

  it('expires a price after 60 seconds of the clock', async () => {
    const c = ctx({ region: 'ttl' });
    expect((await service.calculate(c)).cache).toBe('MISS');
    clock.advance(59_999);
    expect((await service.calculate(c)).cache).toBe('HIT');
    clock.advance(1);
    expect((await service.calculate(c)).cache).toBe('MISS');
  });

  it('changes a base price: emits a schema-valid BasePriceChanged and every instance drops the SKU', async () => {
    const validate = eventSchema('base-price-changed.json');
    const other = await instance();
    const changes: CloudEvent[] = [];
    (await top.bus()).subscribe(EventTypes.BasePriceChanged, (e) => {
      changes.push(e);
    });
    const c = ctx({
      sku: 'SKU-ABC-000002',
      region: 'change',
      customerSegment: 'STANDARD',
      inventoryLevel: 50,
    });
    expect((await other.calculate(c)).response.dynamicPrice).toBe(5);
    expect((await other.calculate(c)).cache).toBe('HIT');
    const before = other.counters.invalidations;

    const changed = await service.setBasePrice(
      { sku: 'SKU-ABC-000002', currency: 'USD', amount: 7.25 },
      'admin-1',
    );
    expect(changed.amount.toFixed(2)).toBe('7.25');
    // The other instance consumed the event and dropped its entries.
    await eventually(() => expect(other.counters.invalidations).toBeGreaterThan(before));
    const next = await other.calculate(c);
    expect(next.cache).toBe('MISS');
    expect(next.response.basePrice).toBe(7.25);

    const event = await eventually(() => {
      const e = changes.find((x) => (x.data as { sku: string }).sku === 'SKU-ABC-000002');
      if (!e) throw new Error('no BasePriceChanged yet');
      return e;
    });
    expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    expect(event.data).toMatchObject({
      previousAmount: 5,
      amount: 7.25,
      currency: 'USD',
      changedBy: 'admin-1',
    });
    await service.setBasePrice({ sku: 'SKU-ABC-000002', currency: 'USD', amount: 5 });
  });

  it.each([
    [{ sku: 'SKU-ABC-000001', currency: 'usd', amount: 1 }, 'currency'],
    [{ sku: 'SKU-ABC-000001', currency: 'USD', amount: 0 }, 'greater than 0'],
    [{ sku: 'SKU-ABC-000001', currency: 'USD', amount: -1 }, 'greater than 0'],
    [{ sku: 'SKU-ABC-000001', currency: 'USD', amount: 1.005 }, '2 decimals'],
    [{ sku: 'SKU-ABC-000001', currency: 'USD', amount: 1e15 }, 'at most'],
    [{ sku: 'SKU-NOP-000001', currency: 'USD', amount: 1 }, 'unknown sku'],
  ])('refuses to set %j (%s)', async (input, message) => {
    await expect(service.setBasePrice(input)).rejects.toThrow(message);
  });
});

describe('two pricing replicas sharing one Redis', () => {
  /** The SQL catalog of replica A: when `hold` is set, a read returns only once it is released. */
  function heldAfterRead(inner: Catalog) {
    const state = { hold: undefined as Promise<void> | undefined, read: deferred() };
    const catalog: Catalog = {
      ...inner,
      async basePrices(requests) {
        const prices = await inner.basePrices(requests);
        if (state.hold) {
          state.read.resolve();
          await state.hold;
        }
        return prices;
      },
    };
    return { catalog, state };
  }

  it('never stores a price computed from a base price the other replica changed meanwhile, even before its event arrives', async () => {
    const top = redisTopology();
    const clock = new ManualClock();
    const held = heldAfterRead(createSqlCatalog(db));
    // Each replica has its own process state and its own bus: replica A never hears of B's
    // change, the worst case (an event delayed or lost), so only the shared version can stop it.
    const replica = (catalog: Catalog) =>
      createPricingService({
        catalog,
        cache: top.cache(clock),
        bus: createMemoryBus('/test/pricing', () => {}),
        clock,
        log: silent,
        counters: newCounters(),
      });
    const a = replica(held.catalog);
    const b = replica(createSqlCatalog(db));
    const sku = 'SKU-TOY-000001';
    const [old] = await createSqlCatalog(db).basePrices([{ sku, currency: 'USD' }]);
    const oldAmount = Number((old as { toFixed(n: number): string }).toFixed(2));
    try {
      for (const [n, single] of [
        [1, true],
        [2, false],
      ] as const) {
        // A misses and reads the old base price from the catalog; B changes it before A stores.
        const c = ctx({ sku, region: `replicas-${n}`, customerSegment: 'STANDARD', inventoryLevel: 50 });
        const release = deferred();
        held.state.hold = release.promise;
        held.state.read = deferred();
        const computing = single ? a.calculate(c) : a.calculateMany([c]).then((r) => r[0] as PriceResult);
        await held.state.read.promise;
        await b.setBasePrice({ sku, currency: 'USD', amount: oldAmount + n }, 'replica-b');
        held.state.hold = undefined;
        release.resolve();
        const stale = await computing;
        expect(stale.cache).toBe('MISS');
        expect(stale.response.basePrice).toBe(oldAmount + n - 1);
        // Both replicas price from the new base price: the stale price was not stored.
        for (const r of [a, b]) {
          const now = await r.calculate(c);
          expect(now.response.basePrice, single ? 'calculate' : 'calculateMany').toBe(oldAmount + n);
        }
      }
    } finally {
      await b.setBasePrice({ sku, currency: 'USD', amount: oldAmount });
      a.close();
      b.close();
    }
  });
});
