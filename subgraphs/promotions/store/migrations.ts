import type { Migration } from '../../../lib/db/index.ts';
import { SAMPLE_RULES } from './seed.ts';

const seedValues = SAMPLE_RULES.map(
  (r) => `('${r.promotion_id}', '${JSON.stringify(r).replace(/'/g, "''")}'::jsonb, '${r.status}')`,
).join(',\n    ');

/** The promotions tables, in the shared SQL store (PGlite embedded, Postgres distributed). */
export const migrations: readonly Migration[] = [
  {
    id: 'promotions:001-rules',
    sql: `CREATE TABLE IF NOT EXISTS promotion_rules (
      promotion_id text PRIMARY KEY,
      document jsonb NOT NULL,
      status text NOT NULL,
      revision integer NOT NULL DEFAULT 1,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
  },
  {
    id: 'promotions:002-redemptions',
    // One row per (customer, order): the idempotency record. Counts are kept beside it so that
    // checking a cap is one row lock, not a count over history.
    sql: `CREATE TABLE IF NOT EXISTS promotion_redemption_orders (
      customer_id text NOT NULL,
      order_id text NOT NULL,
      promotion_ids jsonb NOT NULL,
      redeemed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (customer_id, order_id)
    )`,
  },
  {
    // One statement per migration: PGlite's and pg's parameterised query() run one statement.
    id: 'promotions:003-redemption-counts',
    sql: `CREATE TABLE IF NOT EXISTS promotion_redemption_counts (
      customer_id text NOT NULL,
      promotion_id text NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (customer_id, promotion_id)
    )`,
  },
  {
    // Once, so that a fresh `npm start` evaluates something; rules deleted or changed later stay so.
    id: 'promotions:004-seed',
    sql: `INSERT INTO promotion_rules (promotion_id, document, status) VALUES
    ${seedValues}
    ON CONFLICT (promotion_id) DO NOTHING`,
  },
];
