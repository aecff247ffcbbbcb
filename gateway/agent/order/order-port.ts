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
  /**
   * True when the domain certainly did not store the order (its write failed and rolled back,
   * it answered with a refusal, or the request never reached it); false when it may have (a
   * timeout after sending). A spend reservation is given back only in the first case.
   */
  constructor(
    message: string,
    readonly notStored = false,
  ) {
    super(message);
  }
}
