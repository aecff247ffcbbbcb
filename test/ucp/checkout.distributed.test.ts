/**
 * The UCP checkout suite (and conformance port) on the distributed topology: pricing,
 * promotions and procurement in their own processes, two gateway replicas (consecutive calls
 * alternate between them), Redis and PostgreSQL.
 */
import { startDistributed } from '../../harness/distributed.ts';
import { ucpCheckoutSuite } from './checkout.suite.ts';

ucpCheckoutSuite('distributed', async () => {
  const sys = await startDistributed({ label: 'ucp', env: { UCP_PROFILE_ALLOW_INSECURE: 'true' } });
  return { urls: sys.gateways, gql: sys.gql, token: sys.token, close: () => sys.close() };
});
