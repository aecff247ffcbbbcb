import type { GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { RemoteGraphQLDataSource } from '@apollo/gateway';
import type { RequestContext } from '../../lib/auth/context.ts';

export const GATEWAY_SECRET_HEADER = 'x-gateway-secret';

const isRead = (body: unknown): boolean => {
  try {
    const q = String((JSON.parse(String(body)) as { query?: string }).query ?? '').trimStart();
    return q.startsWith('{') || q.startsWith('query');
  } catch {
    return false;
  }
};

/**
 * Distributed topology: HTTP to a subgraph with keep-alive (Node's fetch pools connections),
 * a per-call timeout, one retry of idempotent reads after a network error (never of a
 * mutation), the gateway secret that subgraphs require, and the caller's token forwarded so
 * each subgraph re-applies the role rules.
 */
export class RemoteSubgraphDataSource extends RemoteGraphQLDataSource<RequestContext> {
  constructor(
    url: string,
    private readonly secret: string,
    timeoutMs: number,
  ) {
    super({
      url,
      fetcher: (async (input: string, init: RequestInit) => {
        const attempt = () => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
        try {
          return await attempt();
        } catch (err) {
          if (err instanceof TypeError && isRead(init.body)) return attempt();
          throw err;
        }
      }) as never,
    });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): void {
    const headers = request.http?.headers;
    if (!headers) return;
    headers.set(GATEWAY_SECRET_HEADER, this.secret);
    if (context?.traceId) headers.set('x-trace-id', context.traceId);
    if (context?.bearer) headers.set('authorization', `Bearer ${context.bearer}`);
  }
}
