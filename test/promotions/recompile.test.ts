import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { testConfig } from '../../harness/system.ts';
import type { CloudEvent } from '../../lib/events/cloudevent.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { createPlatform, type Platform } from '../../lib/platform.ts';
import { createPromotionService, type PromotionEngine } from '../../subgraphs/promotions/service.ts';
import { basket, line, rule } from './support.ts';

const ajv = new Ajv2020({ strict: false });
addFormats.default(ajv);
const eventSchema = ajv.compile(
  JSON.parse(
    readFileSync(new URL('../../schemas/events/promotion-rules-changed.json', import.meta.url), 'utf8'),
  ),
);

/** Polls until `check` passes: replicas recompile asynchronously, after the event arrives. */
async function eventually(check: () => Promise<void> | void, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const vip50 = rule({
  promotion_id: 'REPLICA-VIP-50',
  priority: 1000,
  stacking: 'EXCLUSIVE',
  conditions: { all: [{ fact: 'customer.segment', operator: 'equal', value: 'REPLICA' }] },
  actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 50 }],
});
const probe = basket([line('A', 'x', 1, 10)], { customer: { segment: 'REPLICA' } });

describe('a rule change reaches every instance (two replicas: Postgres + Redis Streams)', () => {
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  const platforms: Platform[] = [];
  const engines: PromotionEngine[] = [];
  const events: CloudEvent[] = [];

  beforeAll(async () => {
    pg = await freshPostgres('promo_replicas');
    const config = testConfig({
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('promo'),
    });
    for (const name of ['replica-a', 'replica-b']) {
      const platform = await createPlatform(config, { service: name });
      platforms.push(platform);
      engines.push(await createPromotionService(platform));
    }
    platforms[1]?.bus.subscribe(EventTypes.PromotionRulesChanged, (e) => {
      events.push(e);
    });
  });
  afterAll(async () => {
    for (const e of engines) await e.close();
    for (const p of platforms) await p.close();
    await pg.drop();
  });

  it('starts both replicas with the seeded rules from the shared store', () => {
    for (const e of engines) expect(e.get('PROMO-ELEC-3FOR2')?.compiled.status).toBe('ACTIVE');
  });

  it('recompiles replica B after an upsert on replica A, and B evaluates with the new rule', async () => {
    const [a, b] = engines as [PromotionEngine, PromotionEngine];
    expect((await b.evaluate(probe)).applied.map((x) => x.promotionId)).not.toContain('REPLICA-VIP-50');
    await a.upsert(vip50, 'admin-1');
    await eventually(async () => {
      expect((await b.evaluate(probe)).applied.map((x) => x.promotionId)).toEqual(['REPLICA-VIP-50']);
    });
    await eventually(() =>
      expect(events.some((e) => (e.data as { promotionId: string }).promotionId === 'REPLICA-VIP-50')).toBe(
        true,
      ),
    );
    const event = events.find((e) => (e.data as { promotionId: string }).promotionId === 'REPLICA-VIP-50');
    expect(eventSchema(event), JSON.stringify(eventSchema.errors)).toBe(true);
    expect(event?.data).toMatchObject({ change: 'UPSERT', changedBy: 'admin-1', status: 'ACTIVE' });
  });

  it('stops applying a rule on replica B once replica A deactivates it', async () => {
    const [a, b] = engines as [PromotionEngine, PromotionEngine];
    await a.setStatus('REPLICA-VIP-50', 'INACTIVE');
    await eventually(async () => {
      expect((await b.evaluate(probe)).applied.map((x) => x.promotionId)).not.toContain('REPLICA-VIP-50');
    });
    expect(b.get('REPLICA-VIP-50')?.revision).toBe(2);
  });

  it('shares redemption counts between replicas (one SQL store)', async () => {
    const [a, b] = engines as [PromotionEngine, PromotionEngine];
    const r = await a.redeem({ orderId: 'rep-1', customerId: 'shared', promotionIds: ['PROMO-ELEC-3FOR2'] });
    expect(r.status).toBe('REDEEMED');
    const again = await b.redeem({
      orderId: 'rep-2',
      customerId: 'shared',
      promotionIds: ['PROMO-ELEC-3FOR2'],
    });
    expect(again.status).toBe('LIMIT_REACHED');
    const evaluation = await b.evaluate(
      basket([line('E', 'electronics', 3, 5)], { customer: { id: 'shared' } }),
    );
    expect(evaluation.notApplied).toContainEqual(
      expect.objectContaining({ promotionId: 'PROMO-ELEC-3FOR2', reason: 'REDEMPTION_LIMIT_REACHED' }),
    );
  });
});

describe('PROMOTION_REDEMPTION_STORE=redis', () => {
  it('consumes caps in Redis while the rules stay in SQL', async () => {
    const prefix = uniquePrefix('promo-store');
    const platform = await createPlatform(
      testConfig({
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        PROMOTION_REDEMPTION_STORE: 'redis',
      }),
      { service: 'redis-redemptions' },
    );
    const engine = await createPromotionService(platform);
    try {
      expect(engine.redemptions.kind).toBe('redis');
      const ask = (orderId: string) =>
        engine.redeem({ orderId, customerId: 'r', promotionIds: ['WELCOME10'] });
      expect((await ask('o1')).status).toBe('REDEEMED');
      expect((await ask('o2')).status).toBe('LIMIT_REACHED');
      expect(await platform.redis?.hget(`${prefix}promo:{r}:redemptions`, 'WELCOME10')).toBe('1');
    } finally {
      await engine.close();
      const keys = (await platform.redis?.keys(`${prefix}*`)) ?? [];
      if (keys.length > 0) await platform.redis?.del(...keys);
      await platform.close();
    }
  });
});

describe('embedded: the in-process bus', () => {
  let platform: Platform;
  let engine: PromotionEngine;
  beforeAll(async () => {
    platform = await createPlatform(testConfig(), { service: 'embedded-promotions' });
    engine = await createPromotionService(platform);
  });
  afterAll(async () => {
    await engine.close();
    await platform.close();
  });

  it('publishes a PromotionRulesChanged CloudEvent that matches its JSON Schema', async () => {
    const seen: CloudEvent[] = [];
    platform.bus.subscribe(EventTypes.PromotionRulesChanged, (e) => {
      seen.push(e);
    });
    await engine.upsert(vip50);
    await eventually(() => expect(seen).toHaveLength(1));
    expect(eventSchema(seen[0]), JSON.stringify(eventSchema.errors)).toBe(true);
    expect(seen[0]?.subject).toBe('REPLICA-VIP-50');
  });

  it('keeps evaluating the other rules when a stored rule no longer compiles', async () => {
    await platform.db.query(
      `UPDATE promotion_rules SET document = jsonb_set(document, '{version}', '"9.9"') WHERE promotion_id = 'WELCOME10'`,
    );
    await engine.reload();
    expect(engine.get('WELCOME10')).toBeUndefined();
    expect(engine.get('PROMO-ELEC-3FOR2')).toBeDefined();
  });
});
