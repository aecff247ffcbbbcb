/**
 * `npm run quote-keys -- show|rotate`: the operator's view of the quote-token key ring (the file
 * QUOTE_TOKEN_KEYS_FILE, default DATA_DIR/keys/quote-signing.json). `rotate` makes a new signing
 * key; running processes sharing the file pick it up within seconds, and tokens signed with the
 * previous key keep verifying until they expire (15 minutes).
 */
import '../source-maps.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { quoteKeysFile } from './issuer.ts';
import { FileQuoteKeyStore } from './key-store.ts';

const command = process.argv[2] ?? 'show';
try {
  const config = loadConfig();
  const store = await FileQuoteKeyStore.open(quoteKeysFile(config));
  if (command === 'rotate') {
    const kid = await store.rotate();
    console.log(`new signing key ${kid}`);
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
