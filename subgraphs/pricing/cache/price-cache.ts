import type { PriceKey, StoredPrice } from '../domain/types.ts';

/** The spec's cache lifetime (behaviour 6). */
export const PRICE_TTL_MS = 60_000;
/** How long a last-known price outlives its fresh entry, for the edge's fallback (behaviour 8). */
export const LAST_KNOWN_TTL_MS = 7 * 24 * 3600_000;

/**
 * Prices by key (sku + region + customerSegment). Each entry is kept twice: fresh for 60 s
 * (what /v1/prices/calculate serves as a HIT) and as the last-known price (what the edge falls
 * back to when pricing is down). Entries of one SKU sit together so a base-price change drops
 * them all in one step. Batch methods are one round trip however many keys they are given.
 *
 * Freshness is judged with the injected clock, so both adapters expire the same way in tests.
 */
export interface PriceCache {
  getMany(keys: readonly PriceKey[]): Promise<(StoredPrice | undefined)[]>;
  /**
   * Stores prices; answers, per entry, whether it was stored. An entry with a `version` is
   * stored only while its SKU's version is still that one (see `versions`).
   */
  setMany(entries: readonly PriceEntry[]): Promise<readonly boolean[]>;
  lastKnownMany(keys: readonly PriceKey[]): Promise<(StoredPrice | undefined)[]>;
  /** Drops the fresh and last-known entries of these SKUs (a base price changed). */
  invalidateSkus(skus: readonly string[]): Promise<void>;
  /**
   * A cache shared by several processes: each SKU's version, which `invalidateSkus` moves on.
   * A miss reads it before it reads the catalog and stores with it, so a price computed from a
   * base price that another process changed meanwhile is never stored. Absent for a cache of
   * one process, where the service's own generations do the same.
   */
  versions?(skus: readonly string[]): Promise<readonly number[]>;
  close?(): Promise<void>;
}

export interface PriceEntry {
  key: PriceKey;
  price: StoredPrice;
  /** The SKU's version read before the catalog (PriceCache.versions); absent: store anyway. */
  version?: number;
}

/** A fresh entry's text: `<expiresAtMs>:<response JSON>`; parsed without touching the JSON. */
export const encodeFresh = (expiresAt: number, json: string): string => `${expiresAt}:${json}`;

export function decodeFresh(text: string, now: number): StoredPrice | undefined {
  const colon = text.indexOf(':');
  const expiresAt = Number(text.slice(0, colon));
  if (colon < 0 || expiresAt <= now) return undefined;
  const price = decodeJson(text.slice(colon + 1));
  return price && { ...price, expiresAt };
}

export function decodeJson(json: string): StoredPrice | undefined {
  try {
    return { json, response: JSON.parse(json) };
  } catch {
    return undefined;
  }
}
