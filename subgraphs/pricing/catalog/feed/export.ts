/**
 * The catalog as an ACP product feed (release 2026-04-17): `metadata.json` (FeedMetadata) and
 * `products.jsonl`, one `Product` per line, priced in one currency (a feed variant has one
 * price; variants without a price in it are left out, and products without any). Read a page of
 * products at a time (keyset by product id), so a large catalog streams in constant memory.
 * What the export writes validates against the vendored schema (test/pricing/catalog-feed.test.ts).
 */
import type { Db } from '../../../../lib/db/index.ts';
import { PRODUCT_JSON, type ProductRow, productOfRow } from '../products-sql.ts';
import { feedOfProduct } from './map.ts';

const PAGE = 500;

/** The feed's metadata: its id names the merchant's feed for a market and currency. */
export function feedMetadata(o: {
  feedId: string;
  targetCountry?: string;
  updatedAt: Date;
}): Record<string, unknown> {
  return {
    id: o.feedId,
    ...(o.targetCountry ? { target_country: o.targetCountry } : {}),
    updated_at: o.updatedAt.toISOString(),
  };
}

/** Every product priced in `currency`, as feed Products, page by page (`productIds`: only those). */
export async function* feedProducts(
  db: Db,
  currency: string,
  opts: { productIds?: readonly string[] } = {},
): AsyncGenerator<Record<string, unknown>> {
  let after = '';
  for (;;) {
    const only = opts.productIds ? 'AND g.product_id = ANY($3::text[])' : '';
    const rows = await db.query<{ p: ProductRow }>(
      `SELECT ${PRODUCT_JSON} AS p FROM catalog_product_groups g
        WHERE g.product_id > $1 ${only} ORDER BY g.product_id LIMIT $2`,
      opts.productIds ? [after, PAGE, opts.productIds] : [after, PAGE],
    );
    for (const r of rows) {
      const feed = feedOfProduct(productOfRow(r.p), currency);
      if (feed) yield feed;
    }
    if (rows.length < PAGE) return;
    after = rows.at(-1)?.p.product_id as string;
  }
}
