import { type Dispatcher, Pool } from 'undici';
import {
  isUsdAmount,
  purchaseOrderRequestJson,
  usdAmount,
} from '../../../subgraphs/procurement/contract/json.ts';
import type { PurchaseOrderResponse } from '../../../subgraphs/procurement/contract/types.ts';
import type { CancelOutcome } from '../../../subgraphs/procurement/domain/order-domain.ts';
import {
  InvalidPlaceOrder,
  OrderIdConflict,
  type PlaceOrder,
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
const answerOf = (text: string): { code?: unknown; error?: unknown } => {
  try {
    return (JSON.parse(text) ?? {}) as { code?: unknown; error?: unknown };
  } catch {
    return {};
  }
};

/**
 * The place command as the internal route reads it: the request as the agent's JSON text
 * (exact budget), a checkout order's lines, total and session beside it as they are (amounts
 * are text). A checkout order's budget is its total, written canonically ("12.5") whichever
 * form of the same amount the caller gave, as the in-process domain accepts either.
 */
function placeBody(cmd: PlaceOrder): string {
  const request =
    cmd.lines === undefined
      ? cmd.request
      : {
          ...cmd.request,
          max_budget_usd: usdAmount(cmd.request.max_budget_usd) ?? cmd.request.max_budget_usd,
        };
  return JSON.stringify({ ...cmd, request: purchaseOrderRequestJson(request) });
}

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
      let body: string;
      try {
        body = placeBody(cmd);
      } catch (err) {
        // A budget that is no amount: the command never left this process.
        throw new InvalidPlaceOrder(err instanceof Error ? err.message : 'the order cannot be sent');
      }
      try {
        res = await pool.request({
          method: 'POST',
          path: INTERNAL_ORDERS_PATH,
          headers,
          // The domain parses and checks the request again with the same strict parser and
          // contract (a checkout order: its lines, total and session too).
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new DomainUnavailable(
          err instanceof Error ? err.message : 'order domain unreachable',
          neverSent(err),
        );
      }
      const text = await res.body.text().catch(() => '');
      if (res.statusCode === 409 && cmd.orderId && answerOf(text).code === ORDER_ID_CONFLICT)
        throw new OrderIdConflict(cmd.orderId);
      // A checkout order the domain refused as built (lines, total and request disagree, or
      // break the wire's limits): the caller's error, as in process; nothing was stored.
      if (res.statusCode === 422 && cmd.lines !== undefined)
        throw new InvalidPlaceOrder(
          String(answerOf(text).error ?? 'the order domain refused the checkout order'),
        );
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
        return {
          spiffeId: o.spiffeId,
          response: exactResponse(toResponse(o)),
          checkoutSessionId: o.checkoutSessionId ?? null,
          // The internal route sends the stored order as it is (amounts as exact text).
          order: o,
        };
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
