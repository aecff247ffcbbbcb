/**
 * Checkout API keys as an agent identity: `Authorization: Bearer acp_…` from an Agentic
 * Commerce Protocol platform. The ACP routes (gateway/agent/acp/) call `verify` first, before
 * scope, block and rate limit, as the SPIFFE identity step does for the /v2 routes.
 *
 * Verdicts are cached by the key's SHA-256 for `cacheMs` (default 5 s), the positive and the
 * negative ones, so a busy platform costs one store lookup per replica and interval. That is
 * also the bound on a revocation: every replica refuses a revoked key at most `cacheMs` after
 * the revocation committed (an entry lives `cacheMs` from the start of the lookup that made it).
 * In the process that revoked it (embedded: the only one) the key is forgotten at once.
 */

import { isProcurementAgent, parseSpiffeId, type SpiffeId } from '../../../lib/auth/spiffe.ts';
import { BoundedMap } from '../../../lib/bounded-map.ts';
import type { Clock } from '../../../lib/clock.ts';
import { hashApiKey, isSecretKeyShaped } from '../../../subgraphs/procurement/api-keys/key.ts';
import type { CheckoutApiKeys } from '../../../subgraphs/procurement/api-keys/store.ts';
import type { CheckoutApiKey } from '../../../subgraphs/procurement/api-keys/types.ts';

export { checkoutApiKeysFor } from '../../../subgraphs/procurement/api-keys/index.ts';
export type { CheckoutApiKeys } from '../../../subgraphs/procurement/api-keys/store.ts';

export type ApiKeyVerdict =
  | { ok: true; key: CheckoutApiKey; id: SpiffeId; scopes: ReadonlySet<string> }
  | { ok: false; reason: string };

export interface ApiKeyVerifierOptions {
  readonly clock: Clock;
  /** SPIFFE_TRUST_DOMAINS now: a key issued under a domain since removed is refused. */
  readonly trustDomains: readonly string[];
  /** How long a verdict is reused, and so how long a revocation may take on another replica. */
  readonly cacheMs?: number;
  /** Verdicts kept at most (oldest forgotten first). */
  readonly maxEntries?: number;
}

export interface ApiKeyVerifier {
  /**
   * The verdict on an Authorization header value. Never echoes the key in a reason; rejects
   * only when the store cannot be read (the caller answers 503, nothing is cached).
   */
  verify(authorization: string | undefined): Promise<ApiKeyVerdict>;
  /** Forgets the verdict of a key hash or key id; everything without an argument. */
  forget(keyHashOrId?: string): void;
}

export const DEFAULT_API_KEY_CACHE_MS = 5_000;
const DEFAULT_MAX_ENTRIES = 10_000;

interface Entry {
  readonly verdict: Promise<ApiKeyVerdict>;
  /** Until when it is reused; Infinity while the lookup runs (concurrent requests share it). */
  until: number;
  keyId?: string;
}

// RFC 9110: the scheme is case-insensitive; one space, then the credential and nothing else.
const BEARER = /^bearer (\S+)$/i;

const refuse = (reason: string): ApiKeyVerdict => ({ ok: false, reason });

export function apiKeyVerifier(
  store: Pick<CheckoutApiKeys, 'verify'> & Partial<Pick<CheckoutApiKeys, 'onRevoked'>>,
  opts: ApiKeyVerifierOptions,
): ApiKeyVerifier {
  const cacheMs = opts.cacheMs ?? DEFAULT_API_KEY_CACHE_MS;
  const cache = new BoundedMap<string, Entry>(opts.maxEntries ?? DEFAULT_MAX_ENTRIES);

  const judge = (key: CheckoutApiKey | null): ApiKeyVerdict => {
    if (!key) return refuse('unknown or revoked checkout API key');
    const id = parseSpiffeId(key.spiffeId);
    if (!id.ok || !isProcurementAgent(id.value, opts.trustDomains))
      return refuse(`checkout API key ${key.id} acts as an identity outside the trusted domains`);
    return { ok: true, key, id: id.value, scopes: new Set(key.scopes) };
  };

  const lookUp = (hash: string, presented: string): Promise<ApiKeyVerdict> => {
    const startedAt = opts.clock.now();
    const entry: Entry = { verdict: store.verify(presented).then(judge), until: Number.POSITIVE_INFINITY };
    cache.set(hash, entry);
    entry.verdict.then(
      (v) => {
        entry.until = startedAt + cacheMs;
        if (v.ok) entry.keyId = v.key.id;
      },
      () => {
        if (cache.get(hash) === entry) cache.delete(hash);
      },
    );
    return entry.verdict;
  };

  const forget = (keyHashOrId?: string) => {
    if (keyHashOrId === undefined) return cache.clear();
    cache.delete(keyHashOrId);
    // A lookup still running may have read the key before it changed: dropped too.
    for (const [hash, e] of cache)
      if (e.keyId === keyHashOrId || e.until === Number.POSITIVE_INFINITY) cache.delete(hash);
  };
  store.onRevoked?.((id) => forget(id));

  return {
    async verify(authorization) {
      if (authorization === undefined || authorization === '') return refuse('no Authorization header');
      const presented = BEARER.exec(authorization)?.[1];
      if (presented === undefined) return refuse('the Authorization header is not a Bearer credential');
      if (!isSecretKeyShaped(presented)) return refuse('the bearer credential is not a checkout API key');
      const hash = hashApiKey(presented);
      const hit = cache.get(hash);
      if (hit && hit.until > opts.clock.now()) return hit.verdict;
      return lookUp(hash, presented);
    },
    forget,
  };
}
