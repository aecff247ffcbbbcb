/** The ACP checkout suite on the embedded system (`npm start`). */
import { startEmbedded } from '../../harness/system.ts';
import { acpCheckoutSuite } from './checkout.suite.ts';

acpCheckoutSuite('embedded', async () => {
  const sys = await startEmbedded();
  return { urls: [sys.url], gql: sys.gql, token: sys.token, close: () => sys.close() };
});
