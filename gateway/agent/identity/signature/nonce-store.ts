/**
 * Nonces of verified signatures, remembered until the signature can no longer be accepted
 * (its `expires` plus the clock skew), so a captured request cannot be sent again: in memory
 * (embedded) or Redis (shared by replicas). Both run the same contract test suite.
 */
export interface NonceStore {
  /**
   * Records `nonce` of key `keyid` until `untilMs` (epoch ms, caller's clock). True the first
   * time; false when it is already remembered and not yet past its time (a replay).
   */
  remember(keyid: string, nonce: string, untilMs: number, now: number): Promise<boolean>;
}

/** The memory store is full of live nonces: refused (503) rather than forgetting one early. */
export class NonceStoreFull extends Error {
  override name = 'NonceStoreFull';
}
