/**
 * Idempotency records (draft-ietf-httpapi-idempotency-key-header), by identity and key: in
 * memory (embedded) or Redis (shared by replicas). Both run the same contract test suite.
 */

/** The reply stored for replay: what the agent got the first time. */
export interface StoredReply {
  readonly status: number;
  readonly body: string;
  readonly location?: string;
}

export type BeginResult =
  /** First use of the key: the caller owns it until complete() or release(). */
  | { readonly kind: 'started' }
  /** The first call with this key has not finished yet (409). */
  | { readonly kind: 'in-flight' }
  /** The key was used with another body (422). */
  | { readonly kind: 'mismatch' }
  /** Finished before: replay this reply. */
  | { readonly kind: 'replay'; readonly reply: StoredReply };

export interface IdempotencyTimes {
  /** How long a finished reply is kept for replay. */
  readonly ttlMs: number;
  /** How long an unfinished call holds its key (a crashed replica must not hold it forever). */
  readonly inFlightMs: number;
}

export interface IdempotencyStore {
  begin(key: string, fingerprint: string, now: number): Promise<BeginResult>;
  complete(key: string, fingerprint: string, reply: StoredReply, now: number): Promise<void>;
  /** The call failed without an outcome worth replaying (e.g. 503): the key is free again. */
  release(key: string): Promise<void>;
  /** Once every reply being stored has landed (or failed): before the store closes. */
  settled?(): Promise<void>;
}

/** What both adapters store under a key. */
export interface IdempotencyRecord {
  readonly fp: string;
  /** Epoch ms (caller's clock) after which the record is gone. */
  readonly exp: number;
  readonly reply?: StoredReply;
}

export function decide(record: IdempotencyRecord | undefined, fingerprint: string, now: number): BeginResult {
  if (!record || record.exp <= now) return { kind: 'started' };
  if (record.fp !== fingerprint) return { kind: 'mismatch' };
  return record.reply ? { kind: 'replay', reply: record.reply } : { kind: 'in-flight' };
}
