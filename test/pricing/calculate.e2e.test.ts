import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { ManualClock } from '../../lib/clock.ts';
import { type CloudEvent, EventTypes } from '../../lib/events/cloudevent.ts';
import { createRedis } from '../../lib/redis.ts';
import type { PricingModule } from '../../subgraphs/pricing/index.ts';
import { eventSchema, eventually } from './support.ts';

/**
 * The spec's "2. Calculate price" over HTTP, behaviour by behaviour, on the system a user
 * starts: embedded in memory, and with Redis and PostgreSQL behind it.
 */

interface Step {
  body: Record<string, unknown>;
  /** Milliseconds the clock moves before this request. */
  advance?: number;
  status?: number;
  cache: 'HIT' | 'MISS';
  /** Fields the reply must have. */
  expect?: Record<string, unknown>;
  /** The reply must be byte for byte the one of this earlier step. */
  sameAs?: number;
  /** The reply must differ from the one of this earlier step (a new calculation). */
  differsFrom?: number;
}

const base = { sku: 'SKU-ABC-000001', currency: 'USD', customerSegment: 'STANDARD', inventoryLevel: 50 };
const at = (region: string, over: Record<string, unknown> = {}) => ({ ...base, region, ...over });

const behaviours: [string, Step[]][] = [
  [
    '1. a second request with the same sku, region and segment is the stored response with X-Cache: HIT',
    [
      { body: at('b1'), cache: 'MISS', expect: { dynamicPrice: 19.99, appliedModifiers: [] } },
      { body: at('b1'), cache: 'HIT', sameAs: 0 },
    ],
  ],
  [
    '1. currency and inventoryLevel are not part of the key: a HIT returns the stored response unchanged',
    [
      {
        body: at('b1-key', { inventoryLevel: 3 }),
        cache: 'MISS',
        expect: { currency: 'USD', dynamicPrice: 22.99 },
      },
      { body: at('b1-key', { currency: 'EUR', inventoryLevel: 900 }), cache: 'HIT', sameAs: 0 },
      { body: at('b1-key', { currency: 'GBP', inventoryLevel: 50 }), cache: 'HIT', sameAs: 0 },
    ],
  ],
  [
    '1. another region, segment or sku is another key',
    [
      { body: at('b1-parts'), cache: 'MISS' },
      { body: at('b1-parts-2'), cache: 'MISS' },
      { body: at('b1-parts', { customerSegment: 'VIP' }), cache: 'MISS' },
      { body: at('b1-parts', { sku: 'SKU-ABC-000002' }), cache: 'MISS', expect: { basePrice: 5 } },
      { body: at('b1-parts'), cache: 'HIT', sameAs: 0 },
    ],
  ],
  [
    '2. the base price is the catalog price of the sku in the requested currency',
    [
      { body: at('b2', { currency: 'EUR' }), cache: 'MISS', expect: { basePrice: 18.49, currency: 'EUR' } },
      {
        body: at('b2-gbp', { currency: 'GBP' }),
        cache: 'MISS',
        expect: { basePrice: 15.99, currency: 'GBP' },
      },
    ],
  ],
  [
    '3. inventory below 10 adds SCARCITY_SURCHARGE_15 (× 1.15, 19.99 → 22.99)',
    [
      {
        body: at('b3-9', { inventoryLevel: 9 }),
        cache: 'MISS',
        expect: { basePrice: 19.99, dynamicPrice: 22.99, appliedModifiers: ['SCARCITY_SURCHARGE_15'] },
      },
    ],
  ],
  [
    '3. inventory of 10 and of 500 changes nothing',
    [
      {
        body: at('b3-10', { inventoryLevel: 10 }),
        cache: 'MISS',
        expect: { dynamicPrice: 19.99, appliedModifiers: [] },
      },
      {
        body: at('b3-500', { inventoryLevel: 500 }),
        cache: 'MISS',
        expect: { dynamicPrice: 19.99, appliedModifiers: [] },
      },
    ],
  ],
  [
    '3. inventory above 500 adds OVERSTOCK_DISCOUNT_10 (× 0.90)',
    [
      {
        body: at('b3-501', { inventoryLevel: 501 }),
        cache: 'MISS',
        expect: { dynamicPrice: 17.99, appliedModifiers: ['OVERSTOCK_DISCOUNT_10'] },
      },
    ],
  ],
  [
    '4. VIP adds VIP_SEGMENT_DISCOUNT (× 0.95) after the inventory modifier, listed in that order',
    [
      {
        body: at('b4-9', { customerSegment: 'VIP', inventoryLevel: 9 }),
        cache: 'MISS',
        expect: { dynamicPrice: 21.84, appliedModifiers: ['SCARCITY_SURCHARGE_15', 'VIP_SEGMENT_DISCOUNT'] },
      },
      {
        body: at('b4-250', { customerSegment: 'VIP', inventoryLevel: 250 }),
        cache: 'MISS',
        expect: { dynamicPrice: 18.99, appliedModifiers: ['VIP_SEGMENT_DISCOUNT'] },
      },
      {
        body: at('b4-501', { customerSegment: 'VIP', inventoryLevel: 501 }),
        cache: 'MISS',
        expect: { dynamicPrice: 17.09, appliedModifiers: ['OVERSTOCK_DISCOUNT_10', 'VIP_SEGMENT_DISCOUNT'] },
      },
      { body: at('b4-lower', { customerSegment: 'vip' }), cache: 'MISS', expect: { appliedModifiers: [] } },
    ],
  ],
  [
    '5. dynamicPrice is rounded to 2 decimals; calculatedAt is the current time in ISO 8601 UTC',
    [
      {
        body: at('b5', { sku: 'SKU-ABC-000002', customerSegment: 'VIP', inventoryLevel: 2 }),
        cache: 'MISS',
        // 5.00 × 1.15 × 0.95 = 5.4625 → 5.46
        expect: { basePrice: 5, dynamicPrice: 5.46, calculatedAt: '2026-01-01T00:00:00.000Z' },
      },
    ],
  ],
  [
    '6. the response is stored for 60 seconds: a HIT until then, a new calculation after',
    [
      { body: at('b6'), cache: 'MISS', expect: { calculatedAt: '2026-01-01T00:00:00.000Z' } },
      { body: at('b6'), advance: 59_999, cache: 'HIT', sameAs: 0 },
      {
        body: at('b6'),
        advance: 1,
        cache: 'MISS',
        differsFrom: 0,
        expect: { calculatedAt: '2026-01-01T00:01:00.000Z' },
      },
      { body: at('b6'), cache: 'HIT', sameAs: 2 },
    ],
  ],
];

const topologies: [string, () => Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>][] = [
  ['embedded, in memory', async () => ({ env: {}, cleanup: async () => {} })],
  [
    'embedded on Redis and PostgreSQL',
    async () => {
      const prefix = uniquePrefix('pricing-e2e');
      const pg = await freshPostgres('pricing_e2e');
      return {
        env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, DATABASE_URL: pg.url },
        async cleanup() {
          await pg.drop();
          const r = createRedis({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER: false });
          const keys = await r.keys(`${prefix}*`);
          if (keys.length) await r.del(...keys);
          r.disconnect();
        },
      };
    },
  ],
];

describe.each(topologies)('POST /v1/prices/calculate (%s)', (_name, setup) => {
  let sys: TestSystem;
  let clock: ManualClock;
  let cleanup: () => Promise<void>;
  const events: CloudEvent[] = [];
  let misses = 0;

  const post = (body: unknown, init: { raw?: string; type?: string } = {}) =>
    fetch(`${sys.url}/v1/prices/calculate`, {
      method: 'POST',
      headers: { 'content-type': init.type ?? 'application/json' },
      body: init.raw ?? JSON.stringify(body),
    });

  beforeAll(async () => {
    const s = await setup();
    cleanup = s.cleanup;
    clock = new ManualClock();
    sys = await startEmbedded(s.env, { clock });
    sys.platform.bus.subscribe(EventTypes.PriceCalculated, (e) => {
      events.push(e);
    });
  });
  afterAll(async () => {
    await sys?.close();
    await cleanup?.();
  });

  it.each(behaviours)('%s', async (_behaviour, steps) => {
    const replies: string[] = [];
    for (const [i, step] of steps.entries()) {
      if (step.advance) clock.advance(step.advance);
      const res = await post(step.body);
      const text = await res.text();
      replies.push(text);
      expect(res.status, `step ${i}: ${text}`).toBe(step.status ?? 200);
      expect(res.headers.get('x-cache'), `step ${i}`).toBe(step.cache);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(
        ['appliedModifiers', 'basePrice', 'calculatedAt', 'currency', 'dynamicPrice', 'sku'].sort(),
      );
      expect(body.calculatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(String(body.dynamicPrice)).toMatch(/^\d+(\.\d{1,2})?$/);
      if (step.cache === 'MISS') {
        misses++;
        expect(body).toMatchObject({ sku: step.body.sku, currency: step.body.currency });
      }
      if (step.expect) expect(body).toMatchObject(step.expect);
      if (step.sameAs !== undefined) expect(text).toBe(replies[step.sameAs]);
      if (step.differsFrom !== undefined) expect(text).not.toBe(replies[step.differsFrom]);
    }
  });

  it('7. emits one schema-valid PriceCalculated event per miss, and none for a hit', async () => {
    const validate = eventSchema('price-calculated.json');
    await eventually(() => expect(events).toHaveLength(misses));
    for (const e of events) expect(validate(e), JSON.stringify(validate.errors)).toBe(true);
    const before = events.length;
    expect((await post(at('b7'))).headers.get('x-cache')).toBe('MISS');
    expect((await post(at('b7', { inventoryLevel: 1 }))).headers.get('x-cache')).toBe('HIT');
    await eventually(() => expect(events).toHaveLength(before + 1));
    expect(events.at(-1)?.data).toMatchObject({ region: 'b7', inventoryLevel: 50, dynamicPrice: 19.99 });
  });

  it('computes 20 concurrent misses for one key once: one MISS, 19 HITs of the same bytes, one event', async () => {
    const before = events.length;
    const replies = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await post(at('concurrent', { inventoryLevel: 700 }));
        return { cache: res.headers.get('x-cache'), text: await res.text() };
      }),
    );
    expect(replies.filter((r) => r.cache === 'MISS')).toHaveLength(1);
    expect(replies.filter((r) => r.cache === 'HIT')).toHaveLength(19);
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    await eventually(() => expect(events.length).toBe(before + 1));
  });

  it.each([
    ['an unknown SKU', 404, at('e-404', { sku: 'SKU-ZZZ-000001' }), 'unknown sku: SKU-ZZZ-000001'],
    ['a SKU in a format the catalog never uses', 404, at('e-404', { sku: 'widget' }), 'unknown sku: widget'],
    [
      'a currency the SKU has no price in',
      404,
      at('e-404', { currency: 'JPY' }),
      'no base price for SKU-ABC-000001 in currency JPY',
    ],
    [
      'a missing field',
      422,
      { sku: 'SKU-ABC-000001', currency: 'USD', region: 'x', customerSegment: 'VIP' },
      '/inventoryLevel',
    ],
    ['a number as a string', 422, at('e-422', { inventoryLevel: '5' }), '/inventoryLevel must be number'],
    ['a number for a string', 422, at('e-422', { region: 7 }), '/region must be string'],
    ['null for a string', 422, at('e-422', { customerSegment: null }), '/customerSegment must be string'],
    [
      'an over-long string',
      422,
      at('e-422', { region: 'r'.repeat(65) }),
      '/region must NOT have more than 64',
    ],
    ['an array body', 422, [base], 'must be object'],
    ['a JSON string body', 422, 'SKU-ABC-000001', 'must be object'],
  ])('answers %s with %i and an error string, and caches nothing', async (_label, status, body, message) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.headers.get('x-cache')).toBeNull();
    const reply = (await res.json()) as { error: string };
    expect(typeof reply.error).toBe('string');
    expect(reply.error).toContain(message);
    expect((await post(body)).status).toBe(status);
  });

  it('ignores fields not in PriceContext (the spec checks nothing beyond the shape)', async () => {
    const res = await post(at('e-extra', { coupon: 'X', note: { a: 1 } }));
    expect(res.status).toBe(200);
    expect(Object.keys((await res.json()) as object)).not.toContain('coupon');
  });

  it.each([
    ['a body that is not JSON', '{"sku": "SKU-ABC-000001",', 'application/json', 400, 'not valid JSON'],
    ['an empty body', '', 'application/json', 400, 'empty'],
    [
      'a body over 4 KiB',
      JSON.stringify(at('big', { pad: 'x'.repeat(5000) })),
      'application/json',
      413,
      'too large',
    ],
    ['an unsupported media type', '<x/>', 'application/xml', 415, 'Unsupported Media Type'],
  ])('answers %s with %i and an error string', async (_label, raw, type, status, message) => {
    const res = await post(undefined, { raw, type });
    expect(res.status).toBe(status);
    const reply = (await res.json()) as { error: string };
    expect(Object.keys(reply)).toEqual(['error']);
    expect(reply.error.toLowerCase()).toContain(message.toLowerCase());
  });

  it('answers an unexpected failure (the catalog fails) with 500 and {"error": "..."}, leaking nothing', async () => {
    // Fault injection: the catalog the service reads from throws an unexpected error.
    const catalog = (sys.local.pricing as PricingModule).api.catalog;
    const basePrices = catalog.basePrices;
    catalog.basePrices = async () => {
      throw new Error('connection reset by peer (secret detail)');
    };
    try {
      const res = await post(at('e-500'));
      expect(res.status).toBe(500);
      const body = await res.json();
      expect(body).toEqual({ error: expect.any(String) });
      expect(JSON.stringify(body)).not.toContain('secret detail');
    } finally {
      catalog.basePrices = basePrices;
    }
    expect((await post(at('e-500'))).status).toBe(200);
  });
});
