/**
 * `npm run ucp-keys -- show|rotate [--publish-for SECONDS]|jwks`: the operator's view of the key
 * ring that signs UCP order webhooks (UCP_SIGNING_KEYS_FILE, default DATA_DIR/keys/ucp-signing.json;
 * docs/ucp-webhooks.md, "The signing key"). `rotate` makes a new key; with `--publish-for` it is
 * published in the business profile's signing_keys at once but signs only after that many seconds,
 * so platforms that cached the profile (it is served with max-age=3600) have seen it before the
 * first webhook it signs. The old key stays published for 7 days. `jwks` prints the public keys
 * the profile serves.
 */
import '../lib/source-maps.ts';
import { parseArgs } from 'node:util';
import { systemClock } from '../lib/clock.ts';
import { ConfigError, loadConfig } from '../lib/config.ts';
import { FileQuoteKeyStore } from '../lib/quote-token/key-store.ts';
import {
  UCP_KEY_RETENTION_MS,
  ucpSigningKeysFile,
} from '../subgraphs/procurement/webhooks/ucp-signing-key.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { 'publish-for': { type: 'string', default: '0' } },
});
const command = positionals[0] ?? 'show';
const publishForSeconds = Number(values['publish-for']);
if (!Number.isInteger(publishForSeconds) || publishForSeconds < 0 || publishForSeconds > 86_400) {
  console.error('--publish-for takes whole seconds from 0 to 86400');
  process.exit(2);
}
try {
  const config = loadConfig();
  const file = ucpSigningKeysFile(config);
  const ring = await FileQuoteKeyStore.open(file, systemClock, { retentionMs: UCP_KEY_RETENTION_MS });
  if (command === 'jwks') {
    console.log(JSON.stringify(ring.jwks().keys, null, 2));
    process.exit(0);
  }
  if (command === 'rotate') {
    const kid = await ring.rotate(publishForSeconds * 1000);
    console.log(
      publishForSeconds
        ? `new key ${kid}: published now, signs in ${publishForSeconds} s`
        : `new signing key ${kid}`,
    );
  } else if (command !== 'show') {
    console.error(`unknown command ${command}: use show, rotate or jwks`);
    process.exit(2);
  }
  console.log(
    JSON.stringify(
      { file, signing: ring.signingKey().kid, published: ring.jwks().keys.map((k) => k.kid) },
      null,
      2,
    ),
  );
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
