/** The UCP checkout suite (and conformance port) on the embedded system (`npm start`). */
import { startEmbedded } from '../../harness/system.ts';
import { ucpCheckoutSuite } from './checkout.suite.ts';

ucpCheckoutSuite('embedded', async () => {
  const sys = await startEmbedded({ UCP_PROFILE_ALLOW_INSECURE: 'true' });
  return { urls: [sys.url], gql: sys.gql, token: sys.token, close: () => sys.close() };
});
