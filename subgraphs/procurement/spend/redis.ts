import type { RedisClient } from '../../../lib/redis.ts';
import { luaScript } from '../../../lib/redis-lua.ts';
import {
  MAX_POLICIES,
  RESERVATION_RETENTION_MS,
  type SpendLedger,
  type SpendStatus,
  TooManyPolicies,
} from './ledger.ts';
import { periodWindow, type SpendPolicy } from './policy.ts';

/*
 * Keys, all under one hash tag `{spend}` so each script's keys share a Redis Cluster slot:
 *   <prefix>spend:{spend}:policies     hash  subject → policy JSON
 *   <prefix>spend:{spend}:ledger       hash  subject → "<period key>:<cents spent>"
 *   <prefix>spend:{spend}:res:<order>  string "<subject>\n<period key>\n<cents>\n<period end>\n<sku>\n<holder>"
 *                                      (PX: period end + retention; written before the SKU was
 *                                      kept, it ends at the period end and replays as before;
 *                                      before the holder, it has none and is released by anyone)
 * The ledger keeps only the current period of each subject: a new period starts from zero.
 * One slot for all spend state: an order costs one script call, and orders are bounded by the
 * order store's commits (about 1k/s on Postgres here), far below one Redis shard.
 */

// Find the most specific policy among the candidates (ARGV[10..], most specific first), judge the
// order by decide.judge's rules in the same order, and charge it: one atomic step, so concurrent
// orders on any number of replicas never spend past the budget.
const RESERVE = `
local now = tonumber(ARGV[1])
local amount = tonumber(ARGV[8])
local held = redis.call('GET', KEYS[3])
if held then
  -- The same order id again: a replay only for the same SKU and amount (ledger.ts, 'mismatch').
  local a = string.find(held, '\\n', 1, true)
  local b = string.find(held, '\\n', a + 1, true)
  local c = string.find(held, '\\n', b + 1, true)
  local d = string.find(held, '\\n', c + 1, true)
  if d then
    local e = string.find(held, '\\n', d + 1, true)
    if string.sub(held, d + 1, (e or 0) - 1) ~= ARGV[7] or tonumber(string.sub(held, b + 1, c - 1)) ~= amount then
      return {'mismatch'}
    end
    -- A replay hands the reservation to its new holder (ledger.ts, ReserveRequest.holder).
    if ARGV[9] ~= '' then
      redis.call('SET', KEYS[3], string.sub(held, 1, (e or 0) - 1) .. '\\n' .. ARGV[9], 'KEEPTTL')
    end
  end
  return {'replayed'}
end
local subject, raw
for i = 10, #ARGV do
  raw = redis.call('HGET', KEYS[1], ARGV[i])
  if raw then subject = ARGV[i]; break end
end
if not subject then return {'no-policy'} end
local p = cjson.decode(raw)
local period, resetsAt = ARGV[2], tonumber(ARGV[3])
if p.period == 'month' then period, resetsAt = ARGV[4], tonumber(ARGV[5]) end
local spent = 0
local l = redis.call('HGET', KEYS[2], subject)
if l then
  local sep = string.find(l, ':', 1, true)
  if string.sub(l, 1, sep - 1) == period then spent = tonumber(string.sub(l, sep + 1)) end
end
local function refuse(reason) return {'refused', raw, string.format('%d', spent), reason} end
if p.expiresAt and p.expiresAt <= now then return refuse('expired') end
if p.skuPrefixes and #p.skuPrefixes > 0 then
  local ok = false
  for _, prefix in ipairs(p.skuPrefixes) do
    if string.sub(ARGV[7], 1, #prefix) == prefix then ok = true; break end
  end
  if not ok then return refuse('sku-not-allowed') end
end
if p.maxPerOrderCents and amount > p.maxPerOrderCents then return refuse('per-order') end
if spent + amount > p.budgetCents then return refuse('budget') end
spent = spent + amount
redis.call('HSET', KEYS[2], subject, period .. ':' .. string.format('%d', spent))
redis.call('SET', KEYS[3], subject .. '\\n' .. period .. '\\n' .. string.format('%d', amount) .. '\\n' .. string.format('%d', resetsAt) .. '\\n' .. ARGV[7] .. '\\n' .. ARGV[9],
  'PX', math.max(1, resetsAt + tonumber(ARGV[6]) - now))
return {'reserved', raw, string.format('%d', spent)}
`;

// Give a reservation back to its period, once; a period that has ended gets nothing back. With
// a holder (ARGV[2], '' for none), only while the reservation is that holder's.
const RELEASE = `
local r = redis.call('GET', KEYS[2])
if not r then return 0 end
local a = string.find(r, '\\n', 1, true)
local b = string.find(r, '\\n', a + 1, true)
local c = string.find(r, '\\n', b + 1, true)
local d = string.find(r, '\\n', c + 1, true)
if d and ARGV[2] ~= '' then
  local e = string.find(r, '\\n', d + 1, true)
  if e then
    local holder = string.sub(r, e + 1)
    if holder ~= '' and holder ~= ARGV[2] then return 0 end
  end
end
redis.call('DEL', KEYS[2])
local subject, period = string.sub(r, 1, a - 1), string.sub(r, a + 1, b - 1)
local cents, resetsAt = tonumber(string.sub(r, b + 1, c - 1)), tonumber(string.sub(r, c + 1, (d or 0) - 1))
if resetsAt <= tonumber(ARGV[1]) then return 0 end
local l = redis.call('HGET', KEYS[1], subject)
if not l then return 0 end
local sep = string.find(l, ':', 1, true)
if string.sub(l, 1, sep - 1) ~= period then return 0 end
local spent = math.max(0, tonumber(string.sub(l, sep + 1)) - cents)
redis.call('HSET', KEYS[1], subject, period .. ':' .. string.format('%d', spent))
return cents
`;

// The most specific policy and its ledger entry, read together.
const STATUS = `
for i = 1, #ARGV do
  local raw = redis.call('HGET', KEYS[1], ARGV[i])
  if raw then return {raw, redis.call('HGET', KEYS[2], ARGV[i]) or ''} end
end
return false
`;

const PUT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

export function redisSpendLedger(redis: RedisClient, prefix: string): SpendLedger {
  const reserve = luaScript(redis, 'acSpendReserve', 3, RESERVE);
  const release = luaScript(redis, 'acSpendRelease', 2, RELEASE);
  const status = luaScript(redis, 'acSpendStatus', 2, STATUS);
  const put = luaScript(redis, 'acSpendPut', 1, PUT);
  const policies = `${prefix}spend:{spend}:policies`;
  const ledger = `${prefix}spend:{spend}:ledger`;
  const reservation = (orderId: string) => `${prefix}spend:{spend}:res:${orderId}`;

  const statusOf = (raw: string, spent: string, now: number): SpendStatus => {
    const policy = JSON.parse(raw) as SpendPolicy;
    const window = periodWindow(policy.period, now);
    const [period, cents] = spent.split(':');
    return { policy, window, spentCents: period === window.key ? Number(cents) : 0 };
  };

  return {
    async putPolicy(p) {
      const done = await put([policies], [p.subject, JSON.stringify(p), MAX_POLICIES]);
      if (Number(done) !== 1) throw new TooManyPolicies();
    },
    async deletePolicy(subject) {
      // Both keys share the {spend} slot, so MULTI holds on Redis Cluster too.
      const r = await redis.multi().hdel(policies, subject).hdel(ledger, subject).exec();
      const [err, removed] = r?.[0] ?? [new Error('spend policy delete: no reply'), 0];
      if (err) throw err;
      return Number(removed) > 0;
    },
    async getPolicy(subject) {
      const raw = await redis.hget(policies, subject);
      return raw ? (JSON.parse(raw) as SpendPolicy) : null;
    },
    async listPolicies() {
      return Object.values(await redis.hgetall(policies)).map((raw) => JSON.parse(raw) as SpendPolicy);
    },
    async status(candidates, now) {
      const found = (await status([policies, ledger], candidates)) as [string, string] | null;
      return found ? statusOf(found[0], found[1], now) : null;
    },
    async reserve(r) {
      const day = periodWindow('day', r.now);
      const month = periodWindow('month', r.now);
      const out = (await reserve(
        [policies, ledger, reservation(r.orderId)],
        [
          r.now,
          day.key,
          day.resetsAt,
          month.key,
          month.resetsAt,
          RESERVATION_RETENTION_MS,
          r.sku,
          r.amountCents,
          r.holder ?? '',
          ...r.candidates,
        ],
      )) as string[];
      const kind = out[0];
      if (kind === 'replayed' || kind === 'no-policy' || kind === 'mismatch') return { kind };
      const policy = JSON.parse(out[1] as string) as SpendPolicy;
      const window = periodWindow(policy.period, r.now);
      const s: SpendStatus = { policy, window, spentCents: Number(out[2]) };
      if (kind === 'reserved') return { kind, status: s };
      return { kind: 'refused', reason: out[3] as 'budget', status: s };
    },
    async release(orderId, now, holder) {
      return Number(await release([ledger, reservation(orderId)], [now, holder ?? '']));
    },
  };
}
