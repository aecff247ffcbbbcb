import type { Platform } from '../../../lib/platform.ts';
import type { SpendLedger } from './ledger.ts';
import { memorySpendLedger } from './memory.ts';
import { redisSpendLedger } from './redis.ts';

/**
 * The ledger of this process: Redis when REDIS_URL is set (the procurement process, where
 * operators set policies, and every gateway replica, where orders spend them, share it), else
 * in process (embedded: the gateway takes the procurement module's instance).
 */
export const spendLedgerFor = (platform: Pick<Platform, 'redis' | 'config'>): SpendLedger =>
  platform.redis ? redisSpendLedger(platform.redis, platform.config.REDIS_KEY_PREFIX) : memorySpendLedger();
