/**
 * The ACP checkout suite on the distributed topology: pricing, promotions and procurement in
 * their own processes, two gateway replicas (consecutive steps alternate between them), Redis
 * and PostgreSQL.
 */
import { startDistributed } from '../../harness/distributed.ts';
import { acpCheckoutSuite } from './checkout.suite.ts';

acpCheckoutSuite('distributed', async () => {
  const sys = await startDistributed({ label: 'acp' });
  return { urls: sys.gateways, gql: sys.gql, token: sys.token, close: () => sys.close() };
});
