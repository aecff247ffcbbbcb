/**
 * A redemption cap holds exactly across two promotions processes that share their counters in
 * Redis (PROMOTION_REDEMPTION_STORE=redis) and their rules in Postgres: concurrent redemptions
 * by one customer, spread over both replicas, consume the cap once. Run on the machine's Redis
 * (redemption-replicas.test.ts) and on a Redis Cluster (test/cluster/).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, uniquePrefix } from '../../harness/services.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { loadConfig } from '../../lib/config.ts';

export function redemptionReplicasSuite(label: string, redisEnv: () => Record<string, string>): void {
  describe(`two promotions processes sharing redemption counters on ${label}`, () => {
    let pg: Awaited<ReturnType<typeof freshPostgres>>;
    const replicas: ServiceProcess[] = [];
    let token: string;

    beforeAll(async () => {
      pg = await freshPostgres('promo_rep');
      const env = {
        DATABASE_URL: pg.url,
        ...redisEnv(),
        REDIS_KEY_PREFIX: uniquePrefix('promo-rep'),
        PROMOTION_REDEMPTION_STORE: 'redis',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-promo-rep-')),
      };
      // One after the other: the first migrates and seeds the shared rule store.
      replicas.push(await startProcess('promotions', env, 90_000));
      replicas.push(await startProcess('promotions', env, 90_000));
      token = await mintDevToken(loadConfig(env), { subject: 'checkout', roles: ['promotions:redeem'] });
    }, 180_000);

    afterAll(async () => {
      await Promise.all(replicas.map((r) => r.stop()));
      await pg?.drop();
    });

    const redeem = (replica: ServiceProcess, orderId: string, customerId: string) =>
      fetch(`${replica.url}/v1/promotions/redemptions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ orderId, customerId, promotionIds: ['WELCOME10'] }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

    it('lets 40 concurrent orders of one customer, over both replicas, use a cap of 1 exactly once', async () => {
      const customer = `cap-${uniquePrefix('c').slice(-9, -1)}`;
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          redeem(replicas[i % 2] as ServiceProcess, `order-${i}`, customer),
        ),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(39);
      expect(results.find((r) => r.status === 409)?.body).toMatchObject({ promotionIds: ['WELCOME10'] });
    });

    it('records an order once when both replicas receive it at once', async () => {
      const customer = `same-${uniquePrefix('c').slice(-9, -1)}`;
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          redeem(replicas[i % 2] as ServiceProcess, 'order-same', customer),
        ),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 200)).toHaveLength(19);
    });
  });
}
