import { BoundedMap } from '../../../lib/bounded-map.ts';
import { judge } from './decide.ts';
import {
  MAX_POLICIES,
  RESERVATION_RETENTION_MS,
  type SpendLedger,
  type SpendStatus,
  TooManyPolicies,
} from './ledger.ts';
import { periodWindow, type SpendPolicy } from './policy.ts';

interface Spent {
  readonly period: string;
  readonly cents: number;
}
interface Reservation {
  readonly subject: string;
  readonly period: string;
  /** What was charged, so the same order id again is told apart from another request under it. */
  readonly sku: string;
  readonly cents: number;
  readonly holder?: string;
  readonly resetsAt: number;
  readonly until: number;
}

/**
 * Embedded topology: one process holds the policies and the ledger. Every operation runs
 * without an await between read and write, so it is atomic on the event loop. Not durable:
 * a restart forgets policies and spend (docs/spend.md).
 */
export function memorySpendLedger(maxReservations = 100_000): SpendLedger {
  const policies = new Map<string, SpendPolicy>();
  // One entry per policy at most (deleting a policy deletes its entry): bounded by MAX_POLICIES.
  const spent = new Map<string, Spent>();
  const reservations = new BoundedMap<string, Reservation>(maxReservations);

  const spentIn = (subject: string, period: string) => {
    const s = spent.get(subject);
    return s && s.period === period ? s.cents : 0;
  };
  const find = (candidates: readonly string[]) => {
    for (const c of candidates) {
      const p = policies.get(c);
      if (p) return p;
    }
    return undefined;
  };
  const statusOf = (p: SpendPolicy, now: number): SpendStatus => {
    const window = periodWindow(p.period, now);
    return { policy: p, window, spentCents: spentIn(p.subject, window.key) };
  };

  return {
    async putPolicy(p) {
      if (!policies.has(p.subject) && policies.size >= MAX_POLICIES) throw new TooManyPolicies();
      policies.set(p.subject, p);
    },
    async deletePolicy(subject) {
      spent.delete(subject);
      return policies.delete(subject);
    },
    async getPolicy(subject) {
      return policies.get(subject) ?? null;
    },
    async listPolicies() {
      return [...policies.values()];
    },
    async status(candidates, now) {
      const p = find(candidates);
      return p ? statusOf(p, now) : null;
    },
    async reserve(r) {
      const held = reservations.get(r.orderId);
      if (held && held.until > r.now) {
        if (held.sku !== r.sku || held.cents !== r.amountCents) return { kind: 'mismatch' };
        if (r.holder !== undefined) reservations.set(r.orderId, { ...held, holder: r.holder });
        return { kind: 'replayed' };
      }
      const p = find(r.candidates);
      if (!p) return { kind: 'no-policy' };
      const status = statusOf(p, r.now);
      const refusal = judge(p, status.spentCents, r.sku, r.amountCents, r.now);
      if (refusal) return { kind: 'refused', reason: refusal, status };
      const cents = status.spentCents + r.amountCents;
      spent.set(p.subject, { period: status.window.key, cents });
      reservations.set(r.orderId, {
        subject: p.subject,
        period: status.window.key,
        sku: r.sku,
        cents: r.amountCents,
        ...(r.holder !== undefined ? { holder: r.holder } : {}),
        resetsAt: status.window.resetsAt,
        until: status.window.resetsAt + RESERVATION_RETENTION_MS,
      });
      return { kind: 'reserved', status: { ...status, spentCents: cents } };
    },
    async release(orderId, now, holder) {
      const held = reservations.get(orderId);
      if (!held) return 0;
      if (holder !== undefined && held.holder !== undefined && held.holder !== holder) return 0;
      reservations.delete(orderId);
      if (held.resetsAt <= now) return 0;
      const s = spent.get(held.subject);
      // A reservation of a period that has ended gives nothing back to the new one.
      if (!s || s.period !== held.period) return 0;
      spent.set(held.subject, { period: s.period, cents: Math.max(0, s.cents - held.cents) });
      return held.cents;
    },
  };
}
