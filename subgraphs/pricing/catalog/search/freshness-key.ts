/**
 * A product's freshness as one sortable text (search/degrade.ts): microseconds since 1970 of
 * `updated_at`, 20 digits, then the md5 of its id (a stable order among those changed at once).
 * Immutable, so indexed (migrations.ts, 052); the search writes the same expression, on `g`.
 */
export const FRESHNESS_KEY = `lpad((extract(epoch FROM updated_at - '1970-01-01 00:00:00+00'::timestamptz) * 1000000)::bigint::text, 20, '0') || md5(product_id)`;

/** The key on the products' alias `g`. */
export const FRESHNESS_KEY_G = FRESHNESS_KEY.replace('updated_at', 'g.updated_at').replace(
  'md5(product_id)',
  'md5(g.product_id)',
);

/** A key as the store wrote it: safe to write as a literal. */
export const FRESHNESS = /^\d{20}[0-9a-f]{32}$/;
