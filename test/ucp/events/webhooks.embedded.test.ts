/** UCP order events on the embedded system (`npm start`). */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded } from '../../../harness/system.ts';
import { ucpWebhookSuite } from './webhooks.suite.ts';

ucpWebhookSuite('embedded', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ucp-events-'));
  const sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    DATA_DIR: dataDir,
  });
  return { urls: [sys.url], dataDir, gql: sys.gql, token: sys.token, close: () => sys.close() };
});
