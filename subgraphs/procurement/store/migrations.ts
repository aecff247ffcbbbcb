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
  {
    // Issue 12, order lifecycle: CANCELLED (with its time) beside APPROVED; the time is set
    // exactly when the status says cancelled. One ALTER, several actions: one statement.
    id: 'procurement:004-order-cancellation',
    sql: `ALTER TABLE purchase_orders
      ADD COLUMN cancelled_at double precision,
      DROP CONSTRAINT purchase_orders_status_check,
      ADD CONSTRAINT purchase_orders_status_check CHECK (
        (status = 'APPROVED' AND cancelled_at IS NULL) OR (status = 'CANCELLED' AND cancelled_at IS NOT NULL)
      )`,
  },
  {
    // An agent's own orders, newest first, resumed after a cursor: one index range scan.
    id: 'procurement:005-purchase-orders-by-owner',
    sql: 'CREATE INDEX purchase_orders_owner ON purchase_orders (spiffe_id, processed_at DESC, order_id DESC)',
  },
  {
    id: 'procurement:006-purchase-orders-by-time',
    sql: 'CREATE INDEX purchase_orders_time ON purchase_orders (processed_at DESC, order_id DESC)',
  },
  {
    // The transactional outbox: written in the order's transaction, relayed to the bus later.
    // event_id is the CloudEvent id (stable across re-relays); relayed_at NULL = still to send.
    id: 'procurement:007-outbox',
    sql: `CREATE TABLE procurement_outbox (
      seq bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      type text NOT NULL,
      subject text NOT NULL,
      time text NOT NULL,
      data jsonb NOT NULL,
      traceparent text,
      tracestate text,
      created_at timestamptz NOT NULL DEFAULT now(),
      relayed_at timestamptz
    )`,
  },
  {
    // The relay's claim reads only this small partial index, however many rows were relayed.
    id: 'procurement:008-outbox-unrelayed',
    sql: 'CREATE INDEX procurement_outbox_unrelayed ON procurement_outbox (seq) WHERE relayed_at IS NULL',
  },
  {
    // Issue 22, human approval: PENDING_APPROVAL and its three decided ends beside APPROVED and
    // CANCELLED. A pending order always has its expiry; cancelled_at is set exactly when
    // CANCELLED. `version` is bumped by every change, which is written only over the version it
    // was computed from, so two operators deciding at once on two replicas cannot both win.
    id: 'procurement:009-order-approval',
    sql: `ALTER TABLE purchase_orders
      ADD COLUMN approvals_required smallint NOT NULL DEFAULT 0 CHECK (approvals_required BETWEEN 0 AND 2),
      ADD COLUMN approvals jsonb NOT NULL DEFAULT '[]'::jsonb,
      ADD COLUMN expires_at double precision,
      ADD COLUMN decided_at double precision,
      ADD COLUMN decided_by text,
      ADD COLUMN decision_reason text CHECK (char_length(decision_reason) <= 1000),
      ADD COLUMN version integer NOT NULL DEFAULT 0,
      DROP CONSTRAINT purchase_orders_status_check,
      ADD CONSTRAINT purchase_orders_status_check CHECK (
        status IN ('PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'EXPIRED', 'CANCELLED')
        AND (cancelled_at IS NULL) = (status <> 'CANCELLED')
        AND (status <> 'PENDING_APPROVAL' OR expires_at IS NOT NULL)
      )`,
  },
  {
    // The approval queue (oldest first) and the expiry sweep read only pending orders.
    id: 'procurement:010-purchase-orders-pending',
    sql: "CREATE INDEX purchase_orders_pending ON purchase_orders (processed_at, order_id) WHERE status = 'PENDING_APPROVAL'",
  },
  {
    id: 'procurement:011-purchase-orders-expiring',
    sql: "CREATE INDEX purchase_orders_expiring ON purchase_orders (expires_at) WHERE status = 'PENDING_APPROVAL'",
  },
  {
    // The procurement audit of order changes after creation (issue 22): who moved an order from
    // which status to which, and why; written in the change's own transaction, append only.
    id: 'procurement:012-order-changes',
    sql: `CREATE TABLE purchase_order_changes (
      seq bigserial PRIMARY KEY,
      order_id text NOT NULL,
      from_status text NOT NULL,
      to_status text NOT NULL,
      actor text NOT NULL,
      reason text,
      at double precision NOT NULL
    )`,
  },
  {
    id: 'procurement:013-order-changes-by-order',
    sql: 'CREATE INDEX purchase_order_changes_order ON purchase_order_changes (order_id, seq)',
  },
  {
    // Checkout orders (one order, many priced lines; docs/procurement.md, "Orders with many
    // lines"): the lines as jsonb (amounts as exact text), the total as text with two decimals,
    // the ACP checkout session. The /v2 contract's limits (quantity 1..100, budget (0, 5000])
    // stay on /v2 orders only: a checkout order's quantity is the sum of up to 50 lines of up to
    // 10,000, and its total (= its allocated budget) passed the spend policy, not that contract.
    id: 'procurement:014-checkout-order-lines',
    sql: `ALTER TABLE purchase_orders
      ADD COLUMN lines jsonb,
      ADD COLUMN total text,
      ADD COLUMN checkout_session_id text CHECK (char_length(checkout_session_id) BETWEEN 1 AND 128),
      DROP CONSTRAINT purchase_orders_quantity_check,
      DROP CONSTRAINT purchase_orders_allocated_budget_check,
      ADD CONSTRAINT purchase_orders_quantity_check CHECK (
        CASE WHEN lines IS NULL THEN quantity BETWEEN 1 AND 100 ELSE quantity BETWEEN 1 AND 500000 END
      ),
      ADD CONSTRAINT purchase_orders_allocated_budget_check CHECK (
        CASE WHEN lines IS NULL THEN allocated_budget > 0 AND allocated_budget <= 5000
        ELSE allocated_budget >= 0 AND allocated_budget < 1000000000 END
      ),
      ADD CONSTRAINT purchase_orders_checkout_check CHECK (
        CASE WHEN lines IS NULL THEN total IS NULL AND checkout_session_id IS NULL
        ELSE jsonb_typeof(lines) = 'array' AND jsonb_array_length(lines) BETWEEN 1 AND 50
          AND total ~ '^[0-9]{1,9}\\.[0-9]{2}$' AND total::numeric = allocated_budget END
      )`,
  },
  {
    // Shipments an operator recorded (recordOrderShipment; UCP's order events show them as
    // fulfillment events): appended, never changed, oldest first.
    id: 'procurement:015-order-shipments',
    sql: `ALTER TABLE purchase_orders ADD COLUMN shipments jsonb NOT NULL DEFAULT '[]'::jsonb
      CHECK (jsonb_typeof(shipments) = 'array' AND jsonb_array_length(shipments) <= 100)`,
  },
  {
    // The buyer's consent choices given with a checkout order (UCP's buyer consent extension,
    // domain/buyer-consent.ts): the four booleans as an object, null when none was given.
    id: 'procurement:016-order-buyer-consent',
    sql: `ALTER TABLE purchase_orders ADD COLUMN buyer_consent jsonb
      CHECK (buyer_consent IS NULL OR jsonb_typeof(buyer_consent) = 'object')`,
  },
  {
    // The approval evidence (issue 50): the spend policy's thresholds that applied when the order
    // was placed, and the operator's decision on an order that waited, signed by this system
    // (a compact JWS, lib/ap2/approval-record.ts); both null for orders without.
    id: 'procurement:017-order-approval-evidence',
    sql: `ALTER TABLE purchase_orders
      ADD COLUMN approval_policy jsonb CHECK (approval_policy IS NULL OR jsonb_typeof(approval_policy) = 'object'),
      ADD COLUMN approval_record text CHECK (char_length(approval_record) <= 16384)`,
  },
];
