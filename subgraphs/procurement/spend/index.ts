import type { Platform } from '../../../lib/platform.ts';
import type { SpendLedger } from './ledger.ts';
import { memorySpendLedger } from './memory.ts';
import { withPolicyIndex } from './policy-index.ts';
import { redisSpendLedger } from './redis.ts';

/**
 * The ledger of this process: Redis when REDIS_URL is set (the procurement process, where
 * operators set policies, and every gateway replica, where orders spend them, share it), else
 * in process (embedded: the gateway takes the procurement module's instance).
 */
export function spendLedgerFor(
  platform: Pick<Platform, 'redis' | 'config' | 'bus' | 'log' | 'onClose' | 'readiness'>,
): SpendLedger {
  if (!platform.redis) return memorySpendLedger();
  // With Redis, every process keeps an index of the subjects that have a policy (policy-index.ts).
  const ledger = withPolicyIndex(
    redisSpendLedger(platform.redis, platform.config.REDIS_KEY_PREFIX),
    platform.bus,
    platform.log,
  );
  platform.onClose(() => ledger.close());
  // Not ready before the index is known: until then every order needs the {spend} slot.
  platform.readiness.set('spend-policy-index', () => ledger.ready());
  return ledger;
}
