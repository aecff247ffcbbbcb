import { type RedisClient, slotTag } from '../../../lib/redis.ts';
import type { RedemptionResult, ReleaseResult } from '../domain/shapes.ts';
import type { RedemptionItem, RedemptionStore } from './redemptions.ts';

/**
 * Checks every cap, then consumes all or none, in one script: Redis runs a script atomically,
 * so concurrent redemptions on any number of replicas see each other's increments.
 * KEYS: the customer's counters (hash), the order's record. ARGV: record, then id/cap pairs
 * (cap 0 = unlimited).
 */
const REDEEM = `
local recorded = redis.call('GET', KEYS[2])
if recorded then return {'ALREADY_RECORDED', recorded} end
local blocked = {}
for i = 2, #ARGV, 2 do
  local cap = tonumber(ARGV[i + 1])
  if cap > 0 and tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0') >= cap then
    table.insert(blocked, ARGV[i])
  end
end
if #blocked > 0 then return {'LIMIT_REACHED', cjson.encode(blocked)} end
for i = 2, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], 1) end
redis.call('SET', KEYS[2], ARGV[1])
return {'REDEEMED', ARGV[1]}
`;

/** Deletes the order's record and decrements its promotions' counters (never below 0). */
const RELEASE = `
local recorded = redis.call('GET', KEYS[2])
if not recorded then return {'NOT_FOUND', '[]'} end
for _, id in ipairs(cjson.decode(recorded)) do
  if tonumber(redis.call('HGET', KEYS[1], id) or '0') > 0 then redis.call('HINCRBY', KEYS[1], id, -1) end
end
redis.call('DEL', KEYS[2])
return {'RELEASED', recorded}
`;

/**
 * Redis adapter (also Redis Cluster): both keys of a customer carry the customer id as hash
 * tag (slotTag: any id, braces included), so they live in one slot and one script may touch both.
 */
export function createRedisRedemptionStore(redis: RedisClient, prefix: string): RedemptionStore {
  const counters = (customerId: string) => `${prefix}promo:${slotTag(customerId)}:redemptions`;
  const order = (customerId: string, orderId: string) =>
    `${prefix}promo:${slotTag(customerId)}:order:${orderId}`;
  return {
    kind: 'redis',
    async countsFor(customerId) {
      const all = await redis.hgetall(counters(customerId));
      return new Map(Object.entries(all).map(([k, v]) => [k, Number(v)]));
    },
    async redeem(orderId, customerId, items: readonly RedemptionItem[]): Promise<RedemptionResult> {
      const ids = items.map((i) => i.promotionId);
      const args = items.flatMap((i) => [i.promotionId, String(i.cap ?? 0)]);
      const [status, payload] = (await redis.eval(
        REDEEM,
        2,
        counters(customerId),
        order(customerId, orderId),
        JSON.stringify(ids),
        ...args,
      )) as [RedemptionResult['status'], string];
      const list = JSON.parse(payload) as string[];
      return {
        orderId,
        customerId,
        status,
        promotionIds: status === 'LIMIT_REACHED' ? [] : list,
        limitReached: status === 'LIMIT_REACHED' ? list : [],
      };
    },

    async release(orderId, customerId): Promise<ReleaseResult> {
      const [status, payload] = (await redis.eval(
        RELEASE,
        2,
        counters(customerId),
        order(customerId, orderId),
      )) as [ReleaseResult['status'], string];
      return { orderId, customerId, status, promotionIds: JSON.parse(payload) as string[] };
    },
  };
}
