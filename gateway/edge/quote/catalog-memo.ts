import type { Clock } from '../../../lib/clock.ts';
import type { CatalogEntry, CatalogPort } from './ports.ts';

const MAX_ENTRIES = 50_000;

/**
 * Catalog entries (name, category, inventory, static base price) kept in the edge for a few
 * seconds: a quote then costs no catalog query when its products were quoted recently, and when
 * the catalog store is unreachable the last entries read still give a static price (pricing
 * behaviour 8's last resort). A base-price change drops the SKU at once (`drop`).
 */
export function memoCatalog(
  inner: CatalogPort,
  clock: Clock,
  ttlMs: number,
): CatalogPort & { drop(skus: readonly string[]): void } {
  const memo = new Map<string, { entry: CatalogEntry | undefined; at: number }>();
  const keyOf = (sku: string, currency: string) => `${currency}|${sku}`;
  return {
    async lookup(skus, currency) {
      const now = clock.now();
      const out: (CatalogEntry | undefined)[] = new Array(skus.length);
      const missing: number[] = [];
      skus.forEach((sku, i) => {
        const m = memo.get(keyOf(sku, currency));
        if (m && now - m.at < ttlMs) out[i] = m.entry;
        else missing.push(i);
      });
      if (missing.length === 0) return out;
      try {
        const found = await inner.lookup(
          missing.map((i) => skus[i] as string),
          currency,
        );
        if (memo.size + missing.length > MAX_ENTRIES) memo.clear();
        missing.forEach((i, j) => {
          out[i] = found[j];
          memo.set(keyOf(skus[i] as string, currency), { entry: found[j], at: now });
        });
        return out;
      } catch (err) {
        // Stale entries beat no answer when the store is down; without them the error stands.
        for (const i of missing) {
          const stale = memo.get(keyOf(skus[i] as string, currency));
          if (!stale) throw err;
          out[i] = stale.entry;
        }
        return out;
      }
    },
    drop(skus) {
      const wanted = new Set(skus);
      for (const key of memo.keys()) if (wanted.has(key.slice(key.indexOf('|') + 1))) memo.delete(key);
    },
  };
}
