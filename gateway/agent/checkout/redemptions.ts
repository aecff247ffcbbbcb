import { Pool } from 'undici';
import type {
  PromotionEngine,
  RedemptionRequest,
  RedemptionResult,
  ReleaseRequest,
  ReleaseResult,
} from '../../../subgraphs/promotions/api.ts';

/**
 * Where a completed checkout records the promotions it used (their per-customer caps), and
 * gives them back when its order could not be placed: the promotions module in process
 * (embedded) or its REST routes with the gateway's secret (distributed). An order cancelled,
 * rejected or expired later is released by promotions itself, from the order event.
 */
export interface RedemptionsPort {
  /** Idempotent per (customerId, orderId); LIMIT_REACHED consumes nothing. */
  redeem(r: RedemptionRequest): Promise<RedemptionResult>;
  release(r: ReleaseRequest): Promise<ReleaseResult>;
}

export const localRedemptions = (api: Pick<PromotionEngine, 'redeem' | 'release'>): RedemptionsPort => ({
  redeem: (r) => api.redeem(r),
  release: (r) => api.release(r),
});

export function remoteRedemptions(
  url: string,
  gatewaySecret: string,
): RedemptionsPort & { close(): Promise<void> } {
  const pool = new Pool(url, {
    connections: 4,
    keepAliveTimeout: 30_000,
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
  });
  const post = async (path: string, body: unknown) => {
    const res = await pool.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', 'x-gateway-secret': gatewaySecret },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  return {
    async redeem(r) {
      const res = await post('/v1/promotions/redemptions', r);
      if (res.status === 409)
        // The route answers a reached cap as 409 with the promotions named; nothing was consumed.
        return {
          orderId: r.orderId,
          customerId: r.customerId,
          status: 'LIMIT_REACHED',
          promotionIds: [],
          limitReached: (res.body.promotionIds as string[] | undefined) ?? [],
        };
      if (res.status !== 200 && res.status !== 201) throw new Error(`promotions answered ${res.status}`);
      return res.body as unknown as RedemptionResult;
    },
    async release(r) {
      const res = await post('/v1/promotions/redemptions/release', r);
      if (res.status !== 200) throw new Error(`promotions answered ${res.status}`);
      return res.body as unknown as ReleaseResult;
    },
    close: () => pool.close(),
  };
}
