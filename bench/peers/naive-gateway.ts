/**
 * The naive federated peer every gateway row is compared with: a plain `ApolloGateway` with
 * the default `RemoteGraphQLDataSource` over HTTP to the subgraph processes, served by
 * @apollo/server's standalone server. It only adds the gateway secret our subgraphs require.
 */
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { supergraphSdl } from '../../gateway/graphql.ts';

export async function startNaiveGateway(
  urls: Record<string, string>,
  secret: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const gateway = new ApolloGateway({
    supergraphSdl: supergraphSdl(),
    buildService: ({ name }) =>
      new RemoteGraphQLDataSource({
        url: `${urls[name]}/graphql`,
        willSendRequest({ request }) {
          request.http?.headers.set('x-gateway-secret', secret);
        },
      }),
  });
  const server = new ApolloServer({ gateway, stopOnTerminationSignals: false });
  const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
  return { url: url.replace(/\/$/, ''), close: () => server.stop() };
}
