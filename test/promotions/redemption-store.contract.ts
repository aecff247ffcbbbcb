import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedemptionStore } from '../../subgraphs/promotions/store/redemptions.ts';

/**
 * The one contract every RedemptionStore adapter meets (SQL on PGlite and Postgres, Redis).
 * `open` gives a fresh, isolated store; `close` drops it.
 */
export function redemptionStoreContract(
  label: string,
  open: () => Promise<{ store: RedemptionStore; close(): Promise<void> }>,
): void {
  describe(`RedemptionStore contract: ${label}`, () => {
    let store: RedemptionStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(() => close());

    const once = (id: string) => ({ promotionId: id, cap: 1 });

    it('records a redemption and counts it for the customer', async () => {
      const r = await store.redeem('o-1', 'alice', [once('P1'), { promotionId: 'P2', cap: undefined }]);
      expect(r).toEqual({
        orderId: 'o-1',
        customerId: 'alice',
        status: 'REDEEMED',
        promotionIds: ['P1', 'P2'],
        limitReached: [],
      });
      expect(await store.countsFor('alice')).toEqual(
        new Map([
          ['P1', 1],
          ['P2', 1],
        ]),
      );
    });

    it('is idempotent per order: a repeat consumes nothing and returns the first record', async () => {
      const r = await store.redeem('o-1', 'alice', [once('P3')]);
      expect(r.status).toBe('ALREADY_RECORDED');
      expect(r.promotionIds).toEqual(['P1', 'P2']);
      expect(await store.countsFor('alice')).toEqual(
        new Map([
          ['P1', 1],
          ['P2', 1],
        ]),
      );
    });

    it('reads counts that follow every write (a cache must not serve stale counts)', async () => {
      expect(await store.countsFor('gina')).toEqual(new Map());
      await store.redeem('g-1', 'gina', [{ promotionId: 'G', cap: undefined }]);
      expect((await store.countsFor('gina')).get('G')).toBe(1);
      await store.redeem('g-2', 'gina', [{ promotionId: 'G', cap: undefined }]);
      expect((await store.countsFor('gina')).get('G')).toBe(2);
      await store.release('g-1', 'gina');
      expect((await store.countsFor('gina')).get('G')).toBe(1);
      // A caller changing the returned map does not change the store's answer.
      (await store.countsFor('gina')).set('G', 99);
      expect((await store.countsFor('gina')).get('G')).toBe(1);
    });

    it('refuses a second order over the cap and consumes nothing of that order (all or nothing)', async () => {
      const r = await store.redeem('o-2', 'alice', [once('P1'), { promotionId: 'P2', cap: undefined }]);
      expect(r).toMatchObject({ status: 'LIMIT_REACHED', limitReached: ['P1'], promotionIds: [] });
      expect(await store.countsFor('alice')).toEqual(
        new Map([
          ['P1', 1],
          ['P2', 1],
        ]),
      );
      // The refused order left no record: once the cap allows it, it can be recorded.
      const later = await store.redeem('o-2', 'alice', [{ promotionId: 'P2', cap: undefined }]);
      expect(later.status).toBe('REDEEMED');
    });

    it('counts customers apart', async () => {
      expect((await store.redeem('o-1', 'bob', [once('P1')])).status).toBe('REDEEMED');
      expect(await store.countsFor('bob')).toEqual(new Map([['P1', 1]]));
      expect(await store.countsFor('nobody')).toEqual(new Map());
    });

    it('counts a customer whose id holds braces like any other, apart from look-alike ids', async () => {
      // On Redis Cluster a brace in the id would otherwise split the customer's keys over slots.
      for (const id of ['}odd{', '{odd}', 'odd']) {
        expect((await store.redeem('b-1', id, [once('B1')])).status).toBe('REDEEMED');
        expect((await store.redeem('b-2', id, [once('B1')])).status).toBe('LIMIT_REACHED');
        expect((await store.release('b-1', id)).status).toBe('RELEASED');
      }
      expect(await store.countsFor('{odd}')).toEqual(new Map([['B1', 0]]));
      expect(await store.countsFor('{odd}x')).toEqual(new Map());
    });

    it('lets a cap of 3 be used exactly 3 times', async () => {
      const statuses = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await store.redeem(`o-cap3-${i}`, 'carol', [{ promotionId: 'P3', cap: 3 }])).status);
      expect(statuses).toEqual(['REDEEMED', 'REDEEMED', 'REDEEMED', 'LIMIT_REACHED', 'LIMIT_REACHED']);
    });

    it('50 concurrent redemptions by one user with a cap of 1 succeed exactly once', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.redeem(`race-${i}`, 'dave', [once('RACE')])),
      );
      expect(results.filter((r) => r.status === 'REDEEMED')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'LIMIT_REACHED')).toHaveLength(49);
      expect((await store.countsFor('dave')).get('RACE')).toBe(1);
    });

    it('gives back a cancelled order: the cap can be used again; a second release finds nothing', async () => {
      expect(
        (await store.redeem('cancel-1', 'frank', [once('C1'), { promotionId: 'C2', cap: undefined }])).status,
      ).toBe('REDEEMED');
      expect((await store.redeem('cancel-2', 'frank', [once('C1')])).status).toBe('LIMIT_REACHED');
      expect(await store.release('cancel-1', 'frank')).toEqual({
        orderId: 'cancel-1',
        customerId: 'frank',
        status: 'RELEASED',
        promotionIds: ['C1', 'C2'],
      });
      expect(await store.countsFor('frank')).toEqual(
        new Map([
          ['C1', 0],
          ['C2', 0],
        ]),
      );
      expect((await store.release('cancel-1', 'frank')).status).toBe('NOT_FOUND');
      expect((await store.release('never', 'frank')).status).toBe('NOT_FOUND');
      expect((await store.redeem('cancel-2', 'frank', [once('C1')])).status).toBe('REDEEMED');
    });

    it('tells another set under a recorded order apart (its first set), and counts an order again once released', async () => {
      // What the checkout completion relies on to give a stale record back (service.ts, place()).
      const free = (id: string) => ({ promotionId: id, cap: undefined });
      const count = async (id: string) => (await store.countsFor('hana')).get(id) ?? 0;
      expect((await store.redeem('r-1', 'hana', [free('X')])).status).toBe('REDEEMED');
      expect((await store.redeem('r-2', 'hana', [free('X')])).status).toBe('REDEEMED');
      // Another set under r-1: the first record's set comes back, nothing of the new set counted.
      expect(await store.redeem('r-1', 'hana', [free('Y'), free('Z')])).toMatchObject({
        status: 'ALREADY_RECORDED',
        promotionIds: ['X'],
      });
      expect([await count('X'), await count('Y'), await count('Z')]).toEqual([2, 0, 0]);
      // Released once: X given back once (r-2 still holds one), a second release finds nothing.
      expect(await store.release('r-1', 'hana')).toMatchObject({ status: 'RELEASED', promotionIds: ['X'] });
      expect((await store.release('r-1', 'hana')).status).toBe('NOT_FOUND');
      expect(await count('X')).toBe(1);
      // The same order id after its release is recorded and counted again, with its new set.
      expect(await store.redeem('r-1', 'hana', [free('Y'), free('Z')])).toMatchObject({
        status: 'REDEEMED',
        promotionIds: ['Y', 'Z'],
      });
      expect([await count('X'), await count('Y'), await count('Z')]).toEqual([1, 1, 1]);
      expect(await store.redeem('r-1', 'hana', [free('Y'), free('Z')])).toMatchObject({
        status: 'ALREADY_RECORDED',
        promotionIds: ['Y', 'Z'],
      });
      expect([await count('X'), await count('Y'), await count('Z')]).toEqual([1, 1, 1]);
    });

    it('50 concurrent repeats of one order record it once', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, () => store.redeem('same-order', 'erin', [{ promotionId: 'P9', cap: 5 }])),
      );
      expect(results.filter((r) => r.status === 'REDEEMED')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'ALREADY_RECORDED')).toHaveLength(49);
      expect((await store.countsFor('erin')).get('P9')).toBe(1);
    });
  });
}
