/**
 * Mints a caller token signed with the embedded development key (DATA_DIR/dev-keys).
 *   npm run token -- --role pricing:admin [--role orders:read] [--sub alice] [--ttl 3600]
 */
import '../lib/source-maps.ts';
import { parseArgs } from 'node:util';
import { mintDevToken } from '../lib/auth/jwt.ts';
import { loadConfig } from '../lib/config.ts';

const { values } = parseArgs({
  options: {
    role: { type: 'string', multiple: true, default: [] },
    sub: { type: 'string', default: 'dev-user' },
    ttl: { type: 'string', default: '3600' },
  },
});
const config = loadConfig();
if (config.AUTH_JWKS_URL) {
  console.error('AUTH_JWKS_URL is set: tokens come from your identity provider, not from the dev key.');
  process.exit(2);
}
console.log(
  await mintDevToken(config, { subject: values.sub, roles: values.role, ttlSeconds: Number(values.ttl) }),
);
