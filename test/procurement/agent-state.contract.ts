/**
 * The one contract of the agent gateway's state stores (blocks, token buckets, idempotency
 * records). Every adapter runs it: in memory, the real Redis (state-stores.test.ts) and a real
 * Redis Cluster (test/cluster/). The same answers from all is what lets replicas share state.
 */
import { describe, expect, it } from 'vitest';
import type { ActivityStore } from '../../gateway/agent/activity/store.ts';
import type { BlockStore } from '../../gateway/agent/block/store.ts';
import type { IdempotencyStore } from '../../gateway/agent/idempotency/store.ts';
import type { BucketPolicy } from '../../gateway/agent/rate-limit/bucket.ts';
import type { BucketStore } from '../../gateway/agent/rate-limit/store.ts';

const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;
export const policy: BucketPolicy = { capacity: 3, refillPerSecond: 2 };
export const times = { ttlMs: 24 * 3600_000, inFlightMs: 30_000 };

/** Fresh, isolated stores of one adapter (each call: a new key prefix where there are keys). */
export interface AgentStateAdapters {
  blocks(): BlockStore;
  buckets(p?: BucketPolicy): BucketStore;
  idempotency(): IdempotencyStore;
  /** Activity with a small bound, to see the least recently seen identity go. */
  activity(maxIdentities?: number): ActivityStore;
}

export function agentStateContract(label: string, make: () => AgentStateAdapters): void {
  describe(`agent state, ${label}`, () => {
    describe('blocks', () => {
      it('does not block after five consecutive errors, blocks on the sixth for 15 minutes', async () => {
        const s = make().blocks();
        for (let i = 1; i <= 5; i++) {
          const st = await s.recordError('a', T0 + i);
          expect(st).toEqual({ count: i, until: 0 });
        }
        const sixth = await s.recordError('a', T0 + 6);
        expect(sixth.until).toBe(T0 + 6 + 15 * MIN);
        expect((await s.get('a', T0 + 7)).until).toBe(T0 + 6 + 15 * MIN);
      });

      it('restarts the count after a valid request', async () => {
        const s = make().blocks();
        for (let i = 0; i < 5; i++) await s.recordError('a', T0);
        await s.reset('a');
        expect((await s.get('a', T0)).count).toBe(0);
        for (let i = 0; i < 5; i++) expect((await s.recordError('a', T0)).until).toBe(0);
        expect((await s.recordError('a', T0)).until).toBeGreaterThan(T0);
      });

      it('does not extend a block with errors made while blocked, and forgets it after it expires', async () => {
        const s = make().blocks();
        for (let i = 0; i < 6; i++) await s.recordError('a', T0);
        const again = await s.recordError('a', T0 + 10 * MIN);
        expect(again.until).toBe(T0 + 15 * MIN);
        const after = T0 + 15 * MIN + 1;
        expect((await s.get('a', after)).until).toBeLessThanOrEqual(after);
        expect((await s.recordError('a', after)).count).toBe(1);
      });

      it('keeps identities apart', async () => {
        const s = make().blocks();
        for (let i = 0; i < 6; i++) await s.recordError('a', T0);
        expect(await s.get('b', T0)).toEqual({ count: 0, until: 0 });
      });

      it('clears a block and the count on unblock, returning the state before; again is a no-op', async () => {
        const s = make().blocks();
        for (let i = 0; i < 6; i++) await s.recordError('a', T0);
        await s.recordError('a', T0 + 1);
        expect(await s.clear('a')).toEqual({ count: 0, until: T0 + 15 * MIN });
        expect(await s.get('a', T0 + 2)).toEqual({ count: 0, until: 0 });
        expect(await s.clear('a')).toEqual({ count: 0, until: 0 });
        // The count starts from zero again: five more errors do not block.
        for (let i = 0; i < 5; i++) expect((await s.recordError('a', T0 + 3)).until).toBe(0);
      });

      it('clears a consecutive count that has not blocked yet', async () => {
        const s = make().blocks();
        for (let i = 0; i < 4; i++) await s.recordError('a', T0);
        expect(await s.clear('a')).toEqual({ count: 4, until: 0 });
        expect((await s.get('a', T0)).count).toBe(0);
      });
    });

    describe('token buckets', () => {
      it('allows a burst of capacity, then refuses with the time until the next token', async () => {
        const s = make().buckets();
        const rs = [];
        for (let i = 0; i < 4; i++) rs.push(await s.take('a', T0));
        expect(rs.map((r) => r.allowed)).toEqual([true, true, true, false]);
        expect(rs.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
        expect(rs[3]?.retryAfterMs).toBe(500);
        expect(rs[3]?.resetMs).toBe(1500);
      });

      it('refills at the configured rate and never above capacity', async () => {
        const s = make().buckets();
        for (let i = 0; i < 3; i++) await s.take('a', T0);
        expect((await s.take('a', T0 + 499)).allowed).toBe(false);
        expect((await s.take('a', T0 + 500)).allowed).toBe(true);
        const later = await s.take('a', T0 + 3_600_000);
        expect(later.remaining).toBe(2);
      });

      it('does not refill when a clock reads earlier than the last refill', async () => {
        const s = make().buckets();
        for (let i = 0; i < 3; i++) await s.take('a', T0);
        expect((await s.take('a', T0 - 10_000)).allowed).toBe(false);
      });

      it('keeps identities apart', async () => {
        const s = make().buckets();
        for (let i = 0; i < 3; i++) await s.take('a', T0);
        expect((await s.take('b', T0)).allowed).toBe(true);
      });

      it('peeks at the level without taking a token: full when unknown, refilled, capped', async () => {
        const s = make().buckets();
        expect(await s.peek('a', T0)).toBe(3);
        await s.take('a', T0);
        await s.take('a', T0);
        expect(await s.peek('a', T0)).toBe(1);
        expect(await s.peek('a', T0)).toBe(1);
        expect(await s.peek('a', T0 + 250)).toBeCloseTo(1.5, 9);
        expect(await s.peek('a', T0 + 3_600_000)).toBe(3);
        expect((await s.take('a', T0)).remaining).toBe(0);
      });

      it('spends each token once under concurrent takes', async () => {
        const s = make().buckets({ capacity: 50, refillPerSecond: 1 });
        const rs = await Promise.all(Array.from({ length: 80 }, () => s.take('a', T0)));
        expect(rs.filter((r) => r.allowed)).toHaveLength(50);
      });
    });

    describe('agent activity', () => {
      it('reports first and last seen and the calls of the last 60 seconds', async () => {
        const s = make().activity();
        for (const at of [T0, T0 + 1000, T0 + 30_000, T0 + 30_500, T0 + 61_000]) s.record('a', at);
        await s.flush();
        const at61 = await s.page(T0 + 61_000, 10);
        // Seconds T0+2 … T0+61: the calls at T0 and T0+1 s have left the window.
        expect(at61.items).toEqual([
          { identity: 'a', firstSeen: T0, lastSeen: T0 + 61_000, callsLastMinute: 3 },
        ]);
        expect((await s.page(T0 + 59_999, 10)).items[0]?.callsLastMinute).toBe(4);
        expect((await s.page(T0 + 200_000, 10)).items[0]?.callsLastMinute).toBe(0);
      });

      it('lists newest first and pages with a cursor, each identity once', async () => {
        const s = make().activity();
        for (let i = 0; i < 7; i++) s.record(`id-${i}`, T0 + (i % 3) * 1000);
        await s.flush();
        const seen: string[] = [];
        let after: Parameters<ActivityStore['page']>[2];
        for (let pages = 0; pages < 5; pages++) {
          const p = await s.page(T0 + 5000, 3, after);
          expect(p.total).toBe(7);
          seen.push(...p.items.map((i) => i.identity));
          after = p.next;
          if (!after) break;
        }
        expect(seen).toEqual(['id-2', 'id-5', 'id-1', 'id-4', 'id-0', 'id-3', 'id-6']);
      });

      it('forgets an identity unseen for 7 days', async () => {
        const s = make().activity();
        s.record('old', T0);
        await s.flush();
        s.record('new', T0 + 7 * 24 * 3600_000 + 1);
        await s.flush();
        const p = await s.page(T0 + 7 * 24 * 3600_000 + 2, 10);
        expect(p.items.map((i) => i.identity)).toEqual(['new']);
        expect(p.total).toBe(1);
      });

      it('keeps the most recently seen identities within its bound', async () => {
        const s = make().activity(3);
        for (let i = 0; i < 3; i++) s.record(`id-${i}`, T0 + i);
        await s.flush();
        s.record('id-0', T0 + 10);
        await s.flush();
        s.record('id-3', T0 + 11);
        await s.flush();
        const p = await s.page(T0 + 20, 10);
        expect(p.items.map((i) => i.identity).sort()).toEqual(['id-0', 'id-2', 'id-3']);
      });
    });

    describe('idempotency records', () => idempotencyContract(() => make().idempotency()));
  });
}

/** The idempotency records' part of the contract, for adapters of that store alone (SQL). */
export function idempotencyContract(store: () => IdempotencyStore): void {
  const reply = { status: 201, body: '{"order_id":"o1"}', location: '/x/o1' };

  it('starts a new key, reports it in flight, then replays the stored reply', async () => {
    const s = store();
    expect(await s.begin('k', 'fp', T0)).toEqual({ kind: 'started' });
    expect(await s.begin('k', 'fp', T0 + 1)).toEqual({ kind: 'in-flight' });
    await s.complete('k', 'fp', reply, T0 + 2);
    expect(await s.begin('k', 'fp', T0 + 3)).toEqual({ kind: 'replay', reply });
  });

  it('reports a mismatch when the key comes back with another body, in flight or finished', async () => {
    const s = store();
    await s.begin('k', 'fp', T0);
    expect(await s.begin('k', 'other', T0)).toEqual({ kind: 'mismatch' });
    await s.complete('k', 'fp', reply, T0);
    expect(await s.begin('k', 'other', T0)).toEqual({ kind: 'mismatch' });
  });

  it('frees a released key and an abandoned in-flight key after its hold time', async () => {
    const s = store();
    await s.begin('k', 'fp', T0);
    await s.release('k');
    expect(await s.begin('k', 'other', T0)).toEqual({ kind: 'started' });
    expect(await s.begin('k', 'other', T0 + times.inFlightMs + 1)).toEqual({ kind: 'started' });
  });

  it('forgets finished replies after their lifetime', async () => {
    const s = store();
    await s.begin('k', 'fp', T0);
    await s.complete('k', 'fp', reply, T0);
    expect(await s.begin('k', 'other', T0 + times.ttlMs + 1)).toEqual({ kind: 'started' });
  });

  it('lets exactly one of many concurrent first uses start', async () => {
    const s = store();
    const rs = await Promise.all(Array.from({ length: 20 }, () => s.begin('k', 'fp', T0)));
    expect(rs.filter((r) => r.kind === 'started')).toHaveLength(1);
    expect(rs.filter((r) => r.kind === 'in-flight')).toHaveLength(19);
  });
}
