import { type Db, migrate } from '../../../lib/db/index.ts';
import type { Platform } from '../../../lib/platform.ts';
import { apiKeyMigrations } from './migrations.ts';
import { type CheckoutApiKeys, sqlCheckoutApiKeys } from './store.ts';

export type { CheckoutApiKeys } from './store.ts';
export type {
  CheckoutApiKey,
  CheckoutApiKeyInput,
  CheckoutWebhookTarget,
  IssuedCheckoutApiKey,
} from './types.ts';

/** One store per database: the embedded procurement module and gateway share an instance. */
const byDb = new WeakMap<Db, Promise<CheckoutApiKeys>>();

/**
 * The checkout API keys of this process's SQL store, migrations applied. The procurement
 * module issues and revokes through it; the agent gateway verifies through it. Embedded, both
 * get the same instance (the same PGlite): a revocation reaches the gateway's verifier at once.
 * Distributed, each process has its own instance on the one PostgreSQL of DATABASE_URL (a
 * gateway replica without DATABASE_URL would read an empty store of its own: every key refused).
 */
export function checkoutApiKeysFor(
  platform: Pick<Platform, 'db' | 'clock' | 'config'>,
): Promise<CheckoutApiKeys> {
  let keys = byDb.get(platform.db);
  if (!keys) {
    keys = (async () => {
      await migrate(platform.db, apiKeyMigrations);
      return sqlCheckoutApiKeys(platform.db, {
        clock: platform.clock,
        trustDomains: platform.config.SPIFFE_TRUST_DOMAINS,
        allowPrivateUrls: platform.config.WEBHOOK_ALLOW_PRIVATE_URLS,
        allowInsecureProfiles: platform.config.UCP_PROFILE_ALLOW_INSECURE,
      });
    })();
    // A failed start is not remembered: the next caller tries again.
    keys.catch(() => byDb.delete(platform.db));
    byDb.set(platform.db, keys);
  }
  return keys;
}
