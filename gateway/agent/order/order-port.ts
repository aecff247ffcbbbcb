import type { PurchaseOrderResponse } from '../../../subgraphs/procurement/contract/types.ts';
import type { PlaceOrder } from '../../../subgraphs/procurement/domain/purchase-order.ts';

/**
 * How the gateway reaches the order domain: in process (embedded) or over HTTP (distributed).
 * Rejects with DomainUnavailable when the domain cannot take the order.
 */
export interface OrderPort {
  place(cmd: PlaceOrder): Promise<PurchaseOrderResponse>;
  /** The order as its owner sees it; null when absent. */
  get(orderId: string): Promise<{ spiffeId: string; response: PurchaseOrderResponse } | null>;
}

export class DomainUnavailable extends Error {
  override name = 'DomainUnavailable';
}
