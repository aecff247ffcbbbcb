import { ConfigError, loadConfig, requireSharedSecret } from '../config.ts';
import { closeOnSignals } from '../http/app.ts';
import { buildSubgraphServer } from './serve-subgraph.ts';
import type { SubgraphFactory, SubgraphName } from './subgraph.ts';

/** `npm run start:<subgraph>`: one subgraph process of the distributed topology. */
export async function runSubgraph(
  name: SubgraphName,
  factory: SubgraphFactory,
  defaultPort: number,
): Promise<void> {
  process.env.APOLLO_TELEMETRY_DISABLED ??= '1';
  try {
    const config = loadConfig({ PORT: String(defaultPort), ...process.env });
    requireSharedSecret(config, `the ${name} subgraph`);
    const server = await buildSubgraphServer(name, factory, config);
    closeOnSignals(server.app, server.platform);
    const url = await server.app.listen({ port: config.PORT, host: config.HOST });
    server.platform.log.info({ url, service: name }, `listening on ${url}`);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}
