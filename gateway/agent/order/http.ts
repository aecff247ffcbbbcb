import { type Dispatcher, Pool } from 'undici';
import { isUsdAmount, purchaseOrderRequestJson } from '../../../subgraphs/procurement/contract/json.ts';
import type { PurchaseOrderResponse } from '../../../subgraphs/procurement/contract/types.ts';
import type { CancelOutcome } from '../../../subgraphs/procurement/domain/order-domain.ts';
import {
  OrderIdConflict,
  type PurchaseOrder,
  toResponse,
} from '../../../subgraphs/procurement/domain/purchase-order.ts';
import {
  GATEWAY_SECRET_HEADER,
  INTERNAL_ORDERS_PATH,
  ORDER_ID_CONFLICT,
} from '../../../subgraphs/procurement/internal-http.ts';
import { cancelResult } from './in-process.ts';
import { DomainUnavailable, type OrderPort } from './order-port.ts';

/**
 * The internal wire carries amounts as decimal text (`"250.75"`): JSON numbers would be read
 * back as doubles. An answer without an exact amount is not an order we can vouch for.
 */
/** The order as its owner sees it, from the domain's stored form on the wire. */
const responseOf = (o: PurchaseOrder): PurchaseOrderResponse => exactResponse(toResponse(o));

function exactResponse(v: PurchaseOrderResponse): PurchaseOrderResponse {
  if (!isUsdAmount(v?.allocated_budget))
    throw new DomainUnavailable('order domain answered without an exact amount');
  return v;
}

/** A connection that was never made: the request cannot have reached the domain. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
function neverSent(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  return NOT_CONNECTED.has(String(e?.code)) || NOT_CONNECTED.has(String(e?.cause?.code));
}

/**
 * Distributed topology: the procurement process's internal endpoint, with keep-alive, a time
 * limit and the gateway secret. Never retried: a retry of a POST could create a second order.
 */
const conflictCode = (text: string): unknown => {
  try {
    return (JSON.parse(text) as { code?: unknown }).code;
  } catch {
    return undefined;
  }
};

export function httpOrders(
  baseUrl: string,
  secret: string,
  timeoutMs: number,
): OrderPort & { close(): Promise<void> } {
  const pool = new Pool(baseUrl, { connections: 32, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const headers = { 'content-type': 'application/json', [GATEWAY_SECRET_HEADER]: secret };
  /** A read or an idempotent change (list, cancel): any failure is "domain unavailable". */
  const call = async (method: 'GET' | 'POST', path: string, body: string | undefined, ok: number[]) => {
    try {
      const res = await pool.request({
        method,
        path,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.body.text();
      if (!ok.includes(res.statusCode))
        throw new DomainUnavailable(`order domain answered ${res.statusCode}`);
      return { status: res.statusCode, body: JSON.parse(text) as unknown };
    } catch (err) {
      if (err instanceof DomainUnavailable) throw err;
      throw new DomainUnavailable(err instanceof Error ? err.message : 'order domain unreachable');
    }
  };
  return {
    async place(cmd) {
      let res: Dispatcher.ResponseData;
      try {
        res = await pool.request({
          method: 'POST',
          path: INTERNAL_ORDERS_PATH,
          headers,
          // The request travels as the agent's JSON text (exact budget); the domain parses and
          // checks it again with the same strict parser and contract.
          body: JSON.stringify({ ...cmd, request: purchaseOrderRequestJson(cmd.request) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new DomainUnavailable(
          err instanceof Error ? err.message : 'order domain unreachable',
          neverSent(err),
        );
      }
      const text = await res.body.text().catch(() => '');
      if (res.statusCode === 409 && cmd.orderId && conflictCode(text) === ORDER_ID_CONFLICT)
        throw new OrderIdConflict(cmd.orderId);
      // The domain answered without placing it (its store rolls a failed write back).
      if (res.statusCode !== 201)
        throw new DomainUnavailable(`order domain answered ${res.statusCode}`, true);
      return exactResponse(JSON.parse(text) as PurchaseOrderResponse);
    },
    async get(orderId) {
      try {
        const res = await pool.request({
          method: 'GET',
          path: `${INTERNAL_ORDERS_PATH}/${encodeURIComponent(orderId)}`,
          headers,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await res.body.text();
        if (res.statusCode === 404) return null;
        if (res.statusCode !== 200) throw new DomainUnavailable(`order domain answered ${res.statusCode}`);
        const o = JSON.parse(text) as PurchaseOrder;
        return { spiffeId: o.spiffeId, response: exactResponse(toResponse(o)) };
      } catch (err) {
        if (err instanceof DomainUnavailable) throw err;
        throw new DomainUnavailable(err instanceof Error ? err.message : 'order domain unreachable');
      }
    },
    async list(spiffeId, { limit, cursor }) {
      const query = new URLSearchParams({ spiffe_id: spiffeId, limit: String(limit) });
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = (await call('GET', `${INTERNAL_ORDERS_PATH}?${query}`, undefined, [200])).body as {
        orders: PurchaseOrder[];
        nextCursor: string | null;
      };
      return { orders: page.orders.map(responseOf), nextCursor: page.nextCursor };
    },
    async cancel(orderId, spiffeId) {
      const r = await call(
        'POST',
        `${INTERNAL_ORDERS_PATH}/${encodeURIComponent(orderId)}/cancel`,
        JSON.stringify({ spiffeId }),
        [200],
      );
      const outcome = r.body as CancelOutcome;
      // The amount must still be exact after the wire; cancelResult maps the rest.
      if (outcome.kind !== 'not-found') responseOf(outcome.order);
      return cancelResult(outcome);
    },
    close: () => pool.close(),
  };
}
