/**
 * The one contract of the agent gateway's state stores (blocks, token buckets, idempotency
 * records). Every adapter runs it: in memory, the real Redis (state-stores.test.ts) and a real
 * Redis Cluster (test/cluster/). The same answers from all is what lets replicas share state.
 */
import { describe, expect, it } from 'vitest';
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

      it('spends each token once under concurrent takes', async () => {
        const s = make().buckets({ capacity: 50, refillPerSecond: 1 });
        const rs = await Promise.all(Array.from({ length: 80 }, () => s.take('a', T0)));
        expect(rs.filter((r) => r.allowed)).toHaveLength(50);
      });
    });

    describe('idempotency records', () => {
      const reply = { status: 201, body: '{"order_id":"o1"}', location: '/x/o1' };

      it('starts a new key, reports it in flight, then replays the stored reply', async () => {
        const s = make().idempotency();
        expect(await s.begin('k', 'fp', T0)).toEqual({ kind: 'started' });
        expect(await s.begin('k', 'fp', T0 + 1)).toEqual({ kind: 'in-flight' });
        await s.complete('k', 'fp', reply, T0 + 2);
        expect(await s.begin('k', 'fp', T0 + 3)).toEqual({ kind: 'replay', reply });
      });

      it('reports a mismatch when the key comes back with another body, in flight or finished', async () => {
        const s = make().idempotency();
        await s.begin('k', 'fp', T0);
        expect(await s.begin('k', 'other', T0)).toEqual({ kind: 'mismatch' });
        await s.complete('k', 'fp', reply, T0);
        expect(await s.begin('k', 'other', T0)).toEqual({ kind: 'mismatch' });
      });

      it('frees a released key and an abandoned in-flight key after its hold time', async () => {
        const s = make().idempotency();
        await s.begin('k', 'fp', T0);
        await s.release('k');
        expect(await s.begin('k', 'other', T0)).toEqual({ kind: 'started' });
        expect(await s.begin('k', 'other', T0 + times.inFlightMs + 1)).toEqual({ kind: 'started' });
      });

      it('forgets finished replies after their lifetime', async () => {
        const s = make().idempotency();
        await s.begin('k', 'fp', T0);
        await s.complete('k', 'fp', reply, T0);
        expect(await s.begin('k', 'other', T0 + times.ttlMs + 1)).toEqual({ kind: 'started' });
      });

      it('lets exactly one of many concurrent first uses start', async () => {
        const s = make().idempotency();
        const rs = await Promise.all(Array.from({ length: 20 }, () => s.begin('k', 'fp', T0)));
        expect(rs.filter((r) => r.kind === 'started')).toHaveLength(1);
        expect(rs.filter((r) => r.kind === 'in-flight')).toHaveLength(19);
      });
    });
  });
}
