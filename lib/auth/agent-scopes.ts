/**
 * The scopes an agent identity can hold on the agent gateway (docs/procurement.md, "Scopes"):
 * the gateway's scope policy grants them, and checkout API keys (subgraphs/procurement/api-keys)
 * are issued with a subset. Here, below both, so neither imports the other.
 */
/** Create purchase orders (and checkout sessions). */
export const ORDER_CREATE_SCOPE = 'orders:create';
/** Read the workload's own spend policy (GET /api/v2/procurement/spend). */
export const SPEND_READ_SCOPE = 'spend:read';
/** Read back and list the workload's own orders (never another identity's). */
export const ORDER_READ_SCOPE = 'orders:read';
/** Cancel the workload's own orders while they are cancellable. */
export const ORDER_CANCEL_SCOPE = 'orders:cancel';
/** Search the catalog and read its products, priced for the workload (GET /v2/products). */
export const CATALOG_READ_SCOPE = 'catalog:read';
/** What the default policy grants the procurement agent. */
export const DEFAULT_AGENT_SCOPES: readonly string[] = [
  CATALOG_READ_SCOPE,
  ORDER_CREATE_SCOPE,
  ORDER_READ_SCOPE,
  ORDER_CANCEL_SCOPE,
  SPEND_READ_SCOPE,
];
