/** The ACP checkout suite on the embedded system (`npm start`). */
import { startEmbedded } from '../../harness/system.ts';
import { acpCheckoutSuite } from './checkout.suite.ts';

acpCheckoutSuite('embedded', async () => {
  const sys = await startEmbedded();
  return {
    urls: [sys.url],
    gql: sys.gql,
    token: sys.token,
    sessions: async () =>
      Number(
        (await sys.platform.db.query<{ n: string }>('SELECT count(*) AS n FROM checkout_sessions'))[0]?.n,
      ),
    close: () => sys.close(),
  };
});
