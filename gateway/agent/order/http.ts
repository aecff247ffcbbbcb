import { type Dispatcher, Pool } from 'undici';
import type { PurchaseOrderResponse } from '../../../subgraphs/procurement/contract/types.ts';
import { toResponse } from '../../../subgraphs/procurement/domain/purchase-order.ts';
import { GATEWAY_SECRET_HEADER, INTERNAL_ORDERS_PATH } from '../../../subgraphs/procurement/internal-http.ts';
import { DomainUnavailable, type OrderPort } from './order-port.ts';

/**
 * Distributed topology: the procurement process's internal endpoint, with keep-alive, a time
 * limit and the gateway secret. Never retried: a retry of a POST could create a second order.
 */
export function httpOrders(
  baseUrl: string,
  secret: string,
  timeoutMs: number,
): OrderPort & { close(): Promise<void> } {
  const pool = new Pool(baseUrl, { connections: 32, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const headers = { 'content-type': 'application/json', [GATEWAY_SECRET_HEADER]: secret };
  return {
    async place(cmd) {
      let res: Dispatcher.ResponseData;
      try {
        res = await pool.request({
          method: 'POST',
          path: INTERNAL_ORDERS_PATH,
          headers,
          body: JSON.stringify(cmd),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new DomainUnavailable(err instanceof Error ? err.message : 'order domain unreachable');
      }
      const text = await res.body.text().catch(() => '');
      if (res.statusCode !== 201) throw new DomainUnavailable(`order domain answered ${res.statusCode}`);
      return JSON.parse(text) as PurchaseOrderResponse;
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
        const o = JSON.parse(text);
        return { spiffeId: o.spiffeId, response: toResponse(o) };
      } catch (err) {
        if (err instanceof DomainUnavailable) throw err;
        throw new DomainUnavailable(err instanceof Error ? err.message : 'order domain unreachable');
      }
    },
    close: () => pool.close(),
  };
}
