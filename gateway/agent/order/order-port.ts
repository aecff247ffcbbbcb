import type { PurchaseOrderResponse } from '../../../subgraphs/procurement/contract/types.ts';
import type { PlaceOrder, PurchaseOrder } from '../../../subgraphs/procurement/domain/purchase-order.ts';

/** One page of the caller's orders, newest first; `nextCursor` null on the last page. */
export interface OrderListing {
  readonly orders: readonly PurchaseOrderResponse[];
  readonly nextCursor: string | null;
}

/** What a cancel came to, as the gateway answers it (200, 409, 404). */
export type CancelResult =
  /** `first`: this call cancelled the order; false: it was already cancelled (same 200). */
  | { readonly kind: 'cancelled'; readonly response: PurchaseOrderResponse; readonly first: boolean }
  | { readonly kind: 'not-cancellable'; readonly response: PurchaseOrderResponse }
  | { readonly kind: 'not-found' };

/**
 * How the gateway reaches the order domain: in process (embedded) or over HTTP (distributed).
 * Rejects with DomainUnavailable when the domain cannot answer. Ownership is the domain's
 * decision: list and cancel take the caller's SPIFFE ID.
 */
export interface OrderPort {
  /**
   * Stores the order (a /v2 order, or a checkout order with `lines`, `total` and
   * `checkoutSessionId`: docs/procurement.md, "Orders with many lines"). Rejects with
   * OrderIdConflict when `cmd.orderId` names an order of another request or checkout, and with
   * InvalidPlaceOrder when a checkout order's lines, total and request disagree (build the
   * request with `checkoutRequest`); in both cases nothing was stored.
   */
  place(cmd: PlaceOrder): Promise<PurchaseOrderResponse>;
  /** The order as its owner sees it; null when absent. */
  /** `checkoutSessionId`: the session a checkout order was placed from (UCP's order read finds it so). */
  /** `order`: the stored order itself (lines, total, shipments, decisions), for UCP's order rendering. */
  get(orderId: string): Promise<{
    spiffeId: string;
    response: PurchaseOrderResponse;
    checkoutSessionId?: string | null;
    order?: PurchaseOrder;
  } | null>;
  /** `cursor`: a next_cursor of an earlier page (already checked by the gateway). */
  list(spiffeId: string, page: { limit: number; cursor?: string }): Promise<OrderListing>;
  cancel(orderId: string, spiffeId: string): Promise<CancelResult>;
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
