/**
 * `npm run quote-keys -- show|rotate [--publish-for SECONDS]`: the operator's view of the
 * quote-token key ring (the file QUOTE_TOKEN_KEYS_FILE, default DATA_DIR/keys/quote-signing.json).
 * `rotate` makes a new signing key; running processes sharing the file pick it up within seconds,
 * and tokens signed with the previous key keep verifying until they expire (15 minutes). With
 * `--publish-for`, the new key is published at once but signs only after that many seconds, so a
 * ring that takes time to reach every replica (a Kubernetes Secret) never yields a token that
 * some replica cannot verify yet.
 */
import '../source-maps.ts';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { quoteKeysFile } from './issuer.ts';
import { FileQuoteKeyStore } from './key-store.ts';

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
  const store = await FileQuoteKeyStore.open(quoteKeysFile(config));
  if (command === 'rotate') {
    const kid = await store.rotate(publishForSeconds * 1000);
    console.log(
      publishForSeconds
        ? `new key ${kid}: published now, signs in ${publishForSeconds} s`
        : `new signing key ${kid}`,
    );
  } else if (command !== 'show') {
    console.error(`unknown command ${command}: use show or rotate`);
    process.exit(2);
  }
  console.log(
    JSON.stringify(
      { file: store.file, signing: store.signingKey().kid, published: store.jwks().keys.map((k) => k.kid) },
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
