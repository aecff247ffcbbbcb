/**
 * Entry point of the gateway process.
 *   TOPOLOGY=embedded (default, `npm start`): the whole system in this one process.
 *   TOPOLOGY=distributed (`npm run start:gateway`): the gateway and edge; subgraphs elsewhere.
 */
import '../lib/source-maps.ts';
import '../lib/telemetry/preload.ts';
import './defer-apollo-telemetry.ts';
import { ConfigError, loadConfig, requireSharedSecret } from '../lib/config.ts';
import { closeOnSignals } from '../lib/http/app.ts';
import { buildDistributedGateway, buildEmbedded } from './topology.ts';

process.env.APOLLO_TELEMETRY_DISABLED ??= '1';

try {
  const config = loadConfig();
  const distributed = process.env.TOPOLOGY === 'distributed';
  if (distributed) requireSharedSecret(config, 'the gateway');
  const system = distributed ? await buildDistributedGateway(config) : await buildEmbedded(config);
  closeOnSignals(system.app, system.platform);
  const url = await system.listen();
  system.platform.log.info(
    { url, topology: distributed ? 'distributed' : 'embedded' },
    `listening on ${url}`,
  );
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
