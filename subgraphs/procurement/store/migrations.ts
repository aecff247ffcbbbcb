import type { Migration } from '../../../lib/db/index.ts';

export const orderMigrations: readonly Migration[] = [
  {
    id: 'procurement:001-purchase-orders',
    sql: `CREATE TABLE purchase_orders (
      seq bigserial PRIMARY KEY,
      order_id text NOT NULL UNIQUE,
      status text NOT NULL CHECK (status IN ('APPROVED')),
      agent_id text NOT NULL CHECK (char_length(agent_id) BETWEEN 10 AND 64),
      spiffe_id text NOT NULL,
      sku text NOT NULL CHECK (sku ~ '^SKU-[A-Z]{3}-[0-9]{6}$'),
      quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 100),
      allocated_budget numeric NOT NULL CHECK (allocated_budget > 0 AND allocated_budget <= 5000),
      processed_at double precision NOT NULL,
      trace_id text NOT NULL
    )`,
  },
  {
    // One statement per migration: migrate() runs each as a prepared statement.
    id: 'procurement:002-purchase-orders-by-agent',
    sql: 'CREATE INDEX purchase_orders_agent ON purchase_orders (agent_id, seq DESC)',
  },
  {
    // Whole cents, as the contract requires (docs/procurement.md, "Exact money"): a budget
    // with more decimals is refused by the store too, never rounded. NOT VALID leaves rows
    // written before this rule as they were (they stay readable as written).
    id: 'procurement:003-allocated-budget-whole-cents',
    sql: 'ALTER TABLE purchase_orders ADD CONSTRAINT purchase_orders_budget_whole_cents CHECK (allocated_budget = round(allocated_budget, 2)) NOT VALID',
  },
];
