/**
 * The one contract of the spend ledgers (policies and what was spent under them). Every
 * adapter runs it: in memory and the real Redis (spend-ledger.test.ts). The same answers from
 * both is what lets the embedded process and any number of gateway replicas enforce one budget.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSpiffeId } from '../../lib/auth/spiffe.ts';
import type { ReserveRequest, SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import { candidateSubjects, type SpendPolicy } from '../../subgraphs/procurement/spend/policy.ts';

/** 2026-01-31T12:00:00Z: the last day of a month, so a day and a month end 12 hours later. */
export const T0 = Date.UTC(2026, 0, 31, 12);
const HOUR = 3_600_000;
export const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const SKU = 'SKU-ELC-000001';

export const policyOf = (p: Partial<SpendPolicy> = {}): SpendPolicy => ({
  subject: AGENT,
  currency: 'USD',
  period: 'day',
  budgetCents: 100_00,
  updatedAt: T0,
  ...p,
});

const candidates = (id: string) => {
  const r = parseSpiffeId(id);
  if (!r.ok) throw new Error(r.reason);
  return candidateSubjects(r.value);
};

let orderSeq = 0;
const order = (p: Partial<ReserveRequest> = {}): ReserveRequest => ({
  orderId: `ord_${(++orderSeq).toString(16).padStart(32, '0')}`,
  candidates: candidates(AGENT),
  sku: SKU,
  amountCents: 10_00,
  now: T0,
  ...p,
});

export function spendLedgerContract(label: string, make: () => SpendLedger): void {
  describe(`spend ledger, ${label}`, () => {
    describe('policies', () => {
      it('stores, replaces, lists and deletes a policy by subject', async () => {
        const l = make();
        await l.putPolicy(policyOf());
        await l.putPolicy(policyOf({ budgetCents: 5_00, skuPrefixes: ['SKU-ELC-'], expiresAt: T0 + HOUR }));
        await l.putPolicy(policyOf({ subject: `${AGENT}/eu` }));
        expect(await l.getPolicy(AGENT)).toEqual(
          policyOf({ budgetCents: 5_00, skuPrefixes: ['SKU-ELC-'], expiresAt: T0 + HOUR }),
        );
        expect((await l.listPolicies()).map((p) => p.subject).sort()).toEqual([AGENT, `${AGENT}/eu`]);
        expect(await l.deletePolicy(AGENT)).toBe(true);
        expect(await l.deletePolicy(AGENT)).toBe(false);
        expect(await l.getPolicy(AGENT)).toBeNull();
      });

      it('keeps the period spend when a policy is replaced, forgets it when the policy is deleted', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 30_00 }));
        await l.reserve(order());
        await l.putPolicy(policyOf({ budgetCents: 15_00 }));
        expect((await l.reserve(order())).kind).toBe('refused');
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(10_00);
        await l.deletePolicy(AGENT);
        await l.putPolicy(policyOf({ budgetCents: 15_00 }));
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(0);
      });

      it('answers no-policy and charges nothing when no policy covers the identity', async () => {
        const l = make();
        await l.putPolicy(policyOf({ subject: `${AGENT}/eu` }));
        expect(await l.reserve(order())).toEqual({ kind: 'no-policy' });
        expect(await l.status(candidates(AGENT), T0)).toBeNull();
      });

      it('applies the most specific policy, and shares a prefix policy among the identities below it', async () => {
        const l = make();
        await l.putPolicy(policyOf({ subject: 'spiffe://example.org/ns/ai', budgetCents: 25_00 }));
        await l.putPolicy(policyOf({ subject: `${AGENT}/vip`, budgetCents: 1000_00 }));
        const a = candidates(`${AGENT}/a`);
        const b = candidates(`${AGENT}/b`);
        expect((await l.reserve(order({ candidates: a }))).kind).toBe('reserved');
        expect((await l.reserve(order({ candidates: b }))).kind).toBe('reserved');
        const third = await l.reserve(order({ candidates: a }));
        expect(third).toMatchObject({ kind: 'refused', reason: 'budget' });
        if (third.kind === 'refused') {
          expect(third.status.policy.subject).toBe('spiffe://example.org/ns/ai');
          expect(third.status.spentCents).toBe(20_00);
        }
        expect(
          (await l.reserve(order({ candidates: candidates(`${AGENT}/vip/1`), amountCents: 500_00 }))).kind,
        ).toBe('reserved');
      });
    });

    describe('limits', () => {
      const cases: [string, Partial<SpendPolicy>, Partial<ReserveRequest>, string][] = [
        ['an order within every limit', {}, {}, 'reserved'],
        ['an order of exactly the remaining budget', { budgetCents: 10_00 }, {}, 'reserved'],
        ['an order one cent over the budget', { budgetCents: 9_99 }, {}, 'budget'],
        ['an order of exactly the per-order maximum', { maxPerOrderCents: 10_00 }, {}, 'reserved'],
        ['an order one cent over the per-order maximum', { maxPerOrderCents: 9_99 }, {}, 'per-order'],
        ['an order one millisecond before expiry', { expiresAt: T0 + 1 }, {}, 'reserved'],
        ['an order at the expiry instant', { expiresAt: T0 }, {}, 'expired'],
        ['a SKU under an allowed prefix', { skuPrefixes: ['SKU-TOY-', 'SKU-ELC-'] }, {}, 'reserved'],
        ['a SKU under no allowed prefix', { skuPrefixes: ['SKU-TOY-'] }, {}, 'sku-not-allowed'],
        ['a SKU that only shares letters with a prefix', { skuPrefixes: ['SKU-EL-'] }, {}, 'sku-not-allowed'],
        ['expiry checked before the amount', { expiresAt: T0, budgetCents: 1 }, {}, 'expired'],
        [
          'the SKU checked before the amount',
          { skuPrefixes: ['SKU-TOY-'], maxPerOrderCents: 1 },
          {},
          'sku-not-allowed',
        ],
      ];
      it.each(cases)('%s', async (_name, policy, req, expected) => {
        const l = make();
        await l.putPolicy(policyOf(policy));
        const r = await l.reserve(order(req));
        expect(r.kind === 'refused' ? r.reason : r.kind).toBe(expected);
      });

      it('reports the policy, the period and the spend with a refusal, and charges nothing', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 25_00 }));
        await l.reserve(order());
        await l.reserve(order());
        const r = await l.reserve(order());
        expect(r).toMatchObject({ kind: 'refused', reason: 'budget', status: { spentCents: 20_00 } });
        if (r.kind === 'refused') expect(r.status.window.resetsAt).toBe(Date.UTC(2026, 1, 1));
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(20_00);
      });

      it('starts a day budget again at 00:00 UTC and a month budget on the 1st', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 10_00 }));
        await l.putPolicy(policyOf({ subject: `${AGENT}/m`, period: 'month', budgetCents: 10_00 }));
        const m = candidates(`${AGENT}/m`);
        const midnight = Date.UTC(2026, 1, 1);
        expect((await l.reserve(order({ now: midnight - 1 }))).kind).toBe('reserved');
        expect((await l.reserve(order({ now: midnight - 1 }))).kind).toBe('refused');
        expect((await l.reserve(order({ now: midnight }))).kind).toBe('reserved');
        expect((await l.reserve(order({ candidates: m, now: Date.UTC(2026, 0, 1) }))).kind).toBe('reserved');
        expect((await l.reserve(order({ candidates: m, now: midnight - 1 }))).kind).toBe('refused');
        const next = await l.reserve(order({ candidates: m, now: midnight }));
        expect(next.kind).toBe('reserved');
        if (next.kind === 'reserved') {
          expect(next.status.window).toEqual({
            key: 'M2026-02',
            start: midnight,
            resetsAt: Date.UTC(2026, 2, 1),
          });
          expect(next.status.spentCents).toBe(10_00);
        }
      });
    });

    describe('reservations', () => {
      it('charges an order id once: the same id again is replayed', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 15_00 }));
        const o = order();
        expect((await l.reserve(o)).kind).toBe('reserved');
        expect(await l.reserve({ ...o, now: T0 + 1 })).toEqual({ kind: 'replayed' });
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(10_00);
      });

      it('tells another SKU or amount under a reserved order id apart: mismatch, nothing charged', async () => {
        const l = make();
        await l.putPolicy(
          policyOf({ budgetCents: 100_00, maxPerOrderCents: 50_00, skuPrefixes: ['SKU-ELC-'] }),
        );
        const o = order();
        expect((await l.reserve(o)).kind).toBe('reserved');
        // What the policy would refuse, under the same id: never let through as a replay.
        expect(await l.reserve({ ...o, sku: 'SKU-XYZ-999999', now: T0 + 1 })).toEqual({ kind: 'mismatch' });
        expect(await l.reserve({ ...o, amountCents: 5000_00, now: T0 + 2 })).toEqual({ kind: 'mismatch' });
        expect(await l.reserve({ ...o, amountCents: 10_01, now: T0 + 3 })).toEqual({ kind: 'mismatch' });
        expect(await l.reserve({ ...o, now: T0 + 4 })).toEqual({ kind: 'replayed' });
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(10_00);
        // The reservation is still the first request's: released once, with its amount.
        expect(await l.release(o.orderId, T0 + 5)).toBe(10_00);
        expect((await l.reserve({ ...o, amountCents: 20_00, now: T0 + 6 })).kind).toBe('reserved');
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(20_00);
      });

      it('hands a replayed reservation to its new holder: a release by the old holder gives nothing back', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 100_00 }));
        const o = order({ holder: 'completion-a' });
        expect((await l.reserve(o)).kind).toBe('reserved');
        expect(await l.reserve({ ...o, holder: 'completion-b', now: T0 + 1 })).toEqual({ kind: 'replayed' });
        // The undone completion's late release: no longer its reservation.
        expect(await l.release(o.orderId, T0 + 2, 'completion-a')).toBe(0);
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(10_00);
        expect(await l.release(o.orderId, T0 + 3, 'completion-b')).toBe(10_00);
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(0);
        // Without a holder (the /v2 route) a release is unconditional, and a replay keeps the holder.
        const p = order({ holder: 'completion-c' });
        await l.reserve(p);
        expect(await l.reserve({ ...p, holder: undefined, now: T0 + 4 })).toEqual({ kind: 'replayed' });
        expect(await l.release(p.orderId, T0 + 5, 'completion-x')).toBe(0);
        expect(await l.release(p.orderId, T0 + 6)).toBe(10_00);
      });

      it('gives a released order back to its period once', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 10_00 }));
        const o = order();
        await l.reserve(o);
        expect((await l.reserve(order())).kind).toBe('refused');
        expect(await l.release(o.orderId, T0 + 1)).toBe(10_00);
        expect(await l.release(o.orderId, T0 + 2)).toBe(0);
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(0);
        expect((await l.reserve(order())).kind).toBe('reserved');
        expect(await l.release('ord_unknown', T0)).toBe(0);
      });

      it('gives nothing back to a new period for an order of an ended one', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 10_00 }));
        const o = order();
        await l.reserve(o);
        const tomorrow = Date.UTC(2026, 1, 1, 1);
        await l.reserve(order({ now: tomorrow }));
        expect(await l.release(o.orderId, tomorrow)).toBe(0);
        expect((await l.status(candidates(AGENT), tomorrow))?.spentCents).toBe(10_00);
      });

      it('never spends past the budget under concurrent orders, to the cent', async () => {
        const l = make();
        await l.putPolicy(policyOf({ budgetCents: 100_01 }));
        const rs = await Promise.all(
          Array.from({ length: 60 }, () => l.reserve(order({ amountCents: 3_33 }))),
        );
        const accepted = rs.filter((r) => r.kind === 'reserved').length;
        expect(accepted).toBe(30);
        expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(30 * 3_33);
      });

      it('keeps exact cents under any sequence of orders and releases (fuzz)', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 1_000_000_00 }),
            fc.array(fc.record({ cents: fc.integer({ min: 1, max: 500_000_00 }), release: fc.boolean() }), {
              minLength: 1,
              maxLength: 25,
            }),
            async (budget, steps) => {
              const l = make();
              await l.putPolicy(policyOf({ budgetCents: budget }));
              let expected = 0;
              for (const s of steps) {
                const o = order({ amountCents: s.cents });
                const r = await l.reserve(o);
                // The oracle: accepted exactly when it fits what is left.
                expect(r.kind).toBe(expected + s.cents <= budget ? 'reserved' : 'refused');
                if (r.kind === 'reserved') {
                  expected += s.cents;
                  if (s.release) {
                    expect(await l.release(o.orderId, T0)).toBe(s.cents);
                    expected -= s.cents;
                  }
                } else if (r.kind === 'refused') expect(r.status.spentCents).toBe(expected);
                expect(expected).toBeLessThanOrEqual(budget);
              }
              expect((await l.status(candidates(AGENT), T0))?.spentCents).toBe(expected);
            },
          ),
          { numRuns: 40 },
        );
      });
    });
  });
}
