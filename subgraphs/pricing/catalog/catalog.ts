import type { Decimal } from 'decimal.js';
import type { Db, Queryable } from '../../../lib/db/index.ts';
import { money } from '../../../lib/money.ts';
import { NoBasePrice, UnknownSku } from '../domain/errors.ts';
import { withIndexesSetAside } from './bulk-load.ts';
import { streamProducts } from './generate.ts';
import type { CatalogProductInput } from './model.ts';
import { countedAtEnd } from './option-values.ts';
import { writeProducts } from './products-write.ts';

export interface Product {
  readonly sku: string;
  readonly name: string;
  readonly category: string;
  readonly inventoryLevel: number;
}

export interface CatalogPrice {
  readonly sku: string;
  readonly currency: string;
  readonly amount: Decimal;
}

export interface PriceRequest {
  readonly sku: string;
  readonly currency: string;
}

export interface BasePriceChange {
  readonly sku: string;
  readonly currency: string;
  /** Absent when the product had no price in this currency before. */
  readonly previousAmount?: Decimal;
  readonly amount: Decimal;
}

/**
 * The catalog, source of truth for base prices. Each method is one SQL query however many SKUs
 * it is given, so a GraphQL batch costs one catalog round trip.
 */
export interface Catalog {
  /** Base price per request, in request order: the amount, or the reason there is none. */
  basePrices(requests: readonly PriceRequest[]): Promise<(Decimal | UnknownSku | NoBasePrice)[]>;
  /** Products in the order asked; undefined for unknown SKUs. */
  products(skus: readonly string[]): Promise<(Product | undefined)[]>;
  /** Every currency price of each SKU, in the order asked (empty for unknown SKUs). */
  pricesOf(skus: readonly string[]): Promise<CatalogPrice[][]>;
  /** Sets (or adds) the base price of a known SKU in one currency. */
  setBasePrice(sku: string, currency: string, amount: Decimal): Promise<BasePriceChange>;
  count(): Promise<number>;
  /** Reads these SKUs again after another writer (a catalog import) changed or removed them (the embedded mirror). */
  reload?(skus: readonly string[]): Promise<void>;
}

export function createSqlCatalog(db: Db, onQuery: () => void = () => {}): Catalog {
  const query = <R>(q: Queryable, sql: string, params: readonly unknown[]) => {
    onQuery();
    return q.query<R>(sql, params);
  };
  // One SKU (the REST miss path): a plain join plans and runs ~5× faster than unnest in PGlite.
  const basePrice = async (r: PriceRequest): Promise<Decimal | UnknownSku | NoBasePrice> => {
    const rows = await query<{ known: boolean; amount: string | null }>(
      db,
      `SELECT true AS known, bp.amount::text AS amount FROM catalog_products p
         LEFT JOIN catalog_base_prices bp ON bp.sku = p.sku AND bp.currency = $2
        WHERE p.sku = $1`,
      [r.sku, r.currency],
    );
    const row = rows[0];
    if (!row) return new UnknownSku(r.sku);
    return row.amount !== null ? money(row.amount) : new NoBasePrice(r.sku, r.currency);
  };
  return {
    async basePrices(requests) {
      if (requests.length === 0) return [];
      if (requests.length === 1) return [await basePrice(requests[0] as PriceRequest)];
      const rows = await query<{ i: number; known: boolean; amount: string | null }>(
        db,
        `SELECT r.i::int AS i, p.sku IS NOT NULL AS known, bp.amount::text AS amount
           FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(sku, currency, i)
           LEFT JOIN catalog_products p ON p.sku = r.sku
           LEFT JOIN catalog_base_prices bp ON bp.sku = r.sku AND bp.currency = r.currency`,
        [requests.map((r) => r.sku), requests.map((r) => r.currency)],
      );
      const out: (Decimal | UnknownSku | NoBasePrice)[] = new Array(requests.length);
      for (const row of rows) {
        const r = requests[row.i - 1] as PriceRequest;
        out[row.i - 1] =
          row.amount !== null
            ? money(row.amount)
            : row.known
              ? new NoBasePrice(r.sku, r.currency)
              : new UnknownSku(r.sku);
      }
      return out;
    },

    async products(skus) {
      if (skus.length === 0) return [];
      const rows = await query<{ sku: string; name: string; category: string; inventory_level: number }>(
        db,
        'SELECT sku, name, category, inventory_level FROM catalog_products WHERE sku = ANY($1::text[])',
        [skus],
      );
      const bySku = new Map(
        rows.map((r) => [
          r.sku,
          { sku: r.sku, name: r.name, category: r.category, inventoryLevel: Number(r.inventory_level) },
        ]),
      );
      return skus.map((s) => bySku.get(s));
    },

    async pricesOf(skus) {
      if (skus.length === 0) return [];
      const rows = await query<{ sku: string; currency: string; amount: string }>(
        db,
        `SELECT sku, currency, amount::text AS amount FROM catalog_base_prices
          WHERE sku = ANY($1::text[]) ORDER BY sku, currency`,
        [skus],
      );
      const bySku = new Map<string, CatalogPrice[]>();
      for (const r of rows) {
        const list = bySku.get(r.sku) ?? [];
        list.push({ sku: r.sku, currency: r.currency, amount: money(r.amount) });
        bySku.set(r.sku, list);
      }
      return skus.map((s) => bySku.get(s) ?? []);
    },

    async setBasePrice(sku, currency, amount) {
      return db.transaction(async (tx) => {
        const known = await query<{ sku: string }>(
          tx,
          'SELECT sku FROM catalog_products WHERE sku = $1 FOR UPDATE',
          [sku],
        );
        if (known.length === 0) throw new UnknownSku(sku);
        const before = await query<{ amount: string }>(
          tx,
          'SELECT amount::text AS amount FROM catalog_base_prices WHERE sku = $1 AND currency = $2',
          [sku, currency],
        );
        await query(
          tx,
          `INSERT INTO catalog_base_prices (sku, currency, amount) VALUES ($1, $2, $3::numeric)
           ON CONFLICT (sku, currency) DO UPDATE SET amount = EXCLUDED.amount, updated_at = now()`,
          [sku, currency, amount.toFixed(2)],
        );
        const previous = before[0]?.amount;
        return {
          sku,
          currency,
          amount,
          ...(previous !== undefined ? { previousAmount: money(previous) } : {}),
        };
      });
    },

    async count() {
      const rows = await query<{ n: number }>(db, 'SELECT count(*)::int AS n FROM catalog_products', []);
      return Number(rows[0]?.n ?? 0);
    },
  };
}

/**
 * Seeds an empty catalog with the generated one (products, variants, prices, search words), in
 * batches of set-based statements, the products streamed (a million of them are never held at
 * once) and the secondary indexes built once at the end (bulk-load.ts). The advisory lock makes
 * concurrent starters against one Postgres seed it once.
 */
export async function seedCatalog(db: Db, size: number): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(727275)');
    const existing = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_products');
    if (Number(existing[0]?.n ?? 0) > 0) return 0;
    // The generated rows are consistent by construction, and the foreign keys' per-row triggers
    // were most of the seed's time on the embedded store (its first start): a superuser (PGlite
    // always is) loads them without; an ordinary role loads them with the checks.
    await tx.query(
      "SELECT set_config('session_replication_role', 'replica', true) WHERE current_setting('is_superuser') = 'on'",
    );
    const skus = await withIndexesSetAside(tx, () =>
      countedAtEnd(tx, async () => {
        let n = 0;
        let batch: CatalogProductInput[] = [];
        for (const p of streamProducts(size)) {
          batch.push(p);
          n += p.variants.length;
          if (batch.length < SEED_BATCH) continue;
          await writeProducts(tx, batch, 'seed', { fresh: true });
          batch = [];
        }
        await writeProducts(tx, batch, 'seed', { fresh: true });
        return n;
      }),
    );
    await analyseCatalog(tx);
    return skus;
  });
}

/**
 * Statistics for the planner after a bulk write: the embedded store (single-user PGlite) has no
 * autovacuum to gather them, and without them search plans scan tables its indexes would serve.
 */
export async function analyseCatalog(q: Queryable): Promise<void> {
  // Two statements at once: on a pool (PostgreSQL) each takes a connection, so the products'
  // sample (170 ms of backend CPU after an import of 7,204 products into the seeded catalog) and
  // the variants', prices' and words' (200 ms together) are read on two cores (psql, per table,
  // load 12). A single connection (PGlite, a transaction) runs them one after the other.
  await Promise.all([
    q.query('ANALYZE catalog_product_groups'),
    q.query('ANALYZE catalog_products, catalog_base_prices, catalog_search_words'),
  ]);
}

/** Products per seeding statement: a batch's JSON stays a few megabytes. */
const SEED_BATCH = 1000;

/** Counts catalog reads (each is one SQL query in the SQL adapter, however many SKUs). */
export function countingCatalog(catalog: Catalog, onRead: () => void): Catalog {
  return {
    ...catalog,
    basePrices: (requests) => {
      onRead();
      return catalog.basePrices(requests);
    },
    products: (skus) => {
      onRead();
      return catalog.products(skus);
    },
    pricesOf: (skus) => {
      onRead();
      return catalog.pricesOf(skus);
    },
  };
}
