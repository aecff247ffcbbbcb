import { Redis } from 'ioredis';
import { freshPostgres, TEST_PGLITE, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { migrations } from '../../subgraphs/promotions/store/migrations.ts';
import { withCountCache } from '../../subgraphs/promotions/store/redemptions-cache.ts';
import { createRedisRedemptionStore } from '../../subgraphs/promotions/store/redemptions-redis.ts';
import { createSqlRedemptionStore } from '../../subgraphs/promotions/store/redemptions-sql.ts';
import { redemptionStoreContract } from './redemption-store.contract.ts';

redemptionStoreContract('SQL on embedded PGlite', async () => {
  const db = await openPglite(undefined, TEST_PGLITE);
  await migrate(db, migrations);
  return { store: createSqlRedemptionStore(db), close: () => db.close() };
});

redemptionStoreContract(
  'SQL on embedded PGlite behind the count cache (what the embedded topology uses)',
  async () => {
    const db = await openPglite(undefined, TEST_PGLITE);
    await migrate(db, migrations);
    return { store: withCountCache(createSqlRedemptionStore(db)), close: () => db.close() };
  },
);

redemptionStoreContract('SQL on the real Postgres (pool of 10: truly concurrent transactions)', async () => {
  const pg = await freshPostgres('promo_redemptions');
  const db = await openPostgres(pg.url, 10);
  await migrate(db, migrations);
  return {
    store: createSqlRedemptionStore(db),
    async close() {
      await db.close();
      await pg.drop();
    },
  };
});

redemptionStoreContract('the real Redis (atomic script)', async () => {
  const prefix = uniquePrefix('promo');
  const redis = new Redis(TEST_REDIS_URL);
  return {
    store: createRedisRedemptionStore(redis, prefix),
    async close() {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
});
