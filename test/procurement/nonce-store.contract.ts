/**
 * The one contract of the signature nonce stores (gateway/agent/identity/signature/): in
 * memory, the real Redis (nonce-store.test.ts) and a real Redis Cluster (test/cluster/). The
 * same answers from all is what lets replicas refuse each other's replays.
 */
import { describe, expect, it } from 'vitest';
import type { NonceStore } from '../../gateway/agent/identity/signature/nonce-store.ts';

const T0 = Date.UTC(2026, 0, 1);
const KEY_A = 'kA1zYtj5N4hKXbVbCIEUlTQ3F0Jn9oXnHq4FzZpkwUs';
const KEY_B = 'kB2zYtj5N4hKXbVbCIEUlTQ3F0Jn9oXnHq4FzZpkwUs';

export function nonceStoreContract(label: string, make: () => NonceStore): void {
  describe(`signature nonces, ${label}`, () => {
    it('accepts a nonce once and refuses it again until its time is past', async () => {
      const s = make();
      expect(await s.remember(KEY_A, 'nonce-0001', T0 + 60_000, T0)).toBe(true);
      expect(await s.remember(KEY_A, 'nonce-0001', T0 + 60_000, T0 + 1)).toBe(false);
      expect(await s.remember(KEY_A, 'nonce-0001', T0 + 120_000, T0 + 59_999)).toBe(false);
    });

    it('forgets a nonce once its time is past, on the callers clock', async () => {
      const s = make();
      expect(await s.remember(KEY_A, 'nonce-0002', T0 + 60_000, T0)).toBe(true);
      expect(await s.remember(KEY_A, 'nonce-0002', T0 + 120_000, T0 + 60_000)).toBe(true);
      expect(await s.remember(KEY_A, 'nonce-0002', T0 + 120_000, T0 + 60_001)).toBe(false);
    });

    it('keeps the nonces of two keys apart', async () => {
      const s = make();
      expect(await s.remember(KEY_A, 'shared-nonce', T0 + 60_000, T0)).toBe(true);
      expect(await s.remember(KEY_B, 'shared-nonce', T0 + 60_000, T0)).toBe(true);
      expect(await s.remember(KEY_B, 'shared-nonce', T0 + 60_000, T0)).toBe(false);
    });

    it('tells nonces apart that differ in one character, long ones included', async () => {
      const s = make();
      const long = 'n'.repeat(255);
      expect(await s.remember(KEY_A, `${long}a`, T0 + 60_000, T0)).toBe(true);
      expect(await s.remember(KEY_A, `${long}b`, T0 + 60_000, T0)).toBe(true);
      expect(await s.remember(KEY_A, `${long}a`, T0 + 60_000, T0)).toBe(false);
    });

    it('lets exactly one of many concurrent uses of a nonce through', async () => {
      const s = make();
      const results = await Promise.all(
        Array.from({ length: 20 }, () => s.remember(KEY_A, 'raced-nonce', T0 + 60_000, T0)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });
}
