import { ApolloServer } from '@apollo/server';
import fastifyApollo from '@as-integrations/fastify';
import type { FastifyInstance } from 'fastify';
import type { RequestContext } from '../auth/context.ts';
import { callerVerifierFor } from '../auth/jwt.ts';
import type { Config } from '../config.ts';
import { createHttpApp } from '../http/app.ts';
import { atLeastOf, openConnections, readyWhenWarm, sendUntil } from '../http/warm-up.ts';
import { createPlatform, type Platform } from '../platform.ts';
import { subgraphContext } from './caller-context.ts';
import type { SubgraphFactory, SubgraphModule, SubgraphName } from './subgraph.ts';

/**
 * Distributed topology: one subgraph in its own process. GraphQL at /graphql (gateway calls
 * only, roles re-checked by the subgraph's shield), its REST adapter beside it. /readyz answers
 * 503 `warming up` until its warm-up has run (lib/http/warm-up.ts).
 */
export async function buildSubgraphServer(
  name: SubgraphName,
  factory: SubgraphFactory,
  config: Config,
): Promise<{ app: FastifyInstance; platform: Platform; module: SubgraphModule; close(): Promise<void> }> {
  const platform = await createPlatform(config, { service: name });
  const module = await factory(platform);
  const app = createHttpApp(platform);
  if (module.routes) await app.register(module.routes);
  const apollo = new ApolloServer<RequestContext>({
    schema: module.schema,
    includeStacktraceInErrorResponses: false,
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  app.addHook('onClose', () => apollo.stop());
  await app.register(fastifyApollo(apollo), {
    context: subgraphContext(await callerVerifierFor(config), config.GATEWAY_SHARED_SECRET),
  });
  // Ready means warm (issue 29): its SQL pool and Redis opened, its hot paths sent for WARM_UP_MS.
  readyWhenWarm(app, platform, async (budgetMs) => {
    const started = performance.now();
    await openConnections(platform);
    const sent = await sendUntil(app, (await module.warmUpRequests?.()) ?? [], {
      deadline: started + budgetMs,
      ...atLeastOf(config, started),
    });
    return { ms: performance.now() - started, ...sent };
  });
  return {
    app,
    platform,
    module,
    async close() {
      await app.close();
      await module.close?.();
      await platform.close();
    },
  };
}
