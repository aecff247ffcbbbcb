/**
 * The ACP checkout suite on the distributed topology: pricing, promotions and procurement in
 * their own processes, two gateway replicas (consecutive steps alternate between them), Redis
 * and PostgreSQL.
 */
import pg from 'pg';
import { startDistributed } from '../../harness/distributed.ts';
import { acpCheckoutSuite } from './checkout.suite.ts';

acpCheckoutSuite('distributed', async () => {
  const sys = await startDistributed({ label: 'acp' });
  const db = new pg.Client({ connectionString: sys.env.DATABASE_URL });
  await db.connect();
  return {
    urls: sys.gateways,
    gql: sys.gql,
    token: sys.token,
    sessions: async () =>
      Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM checkout_sessions')).rows[0]?.n),
    close: async () => {
      await db.end();
      await sys.close();
    },
  };
});
