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
 * A subgraph answers 4xx with a GraphQL result when a resolver's error sets
 * `extensions.http.status` (BAD_USER_INPUT 422, NOT_FOUND 404, …: Apollo Server's rule). The
 * gateway's RemoteGraphQLDataSource turns any non-2xx reply into INTERNAL_SERVER_ERROR
 * "422: Unprocessable Entity", losing the code and the reasons it carries. A non-2xx reply whose
 * body is a GraphQL result (an `errors` array) is handed on as the result it is, so the error
 * reaches the client as it does embedded; any other non-2xx reply stays an error.
 */
async function asGraphQLResult(res: Response): Promise<Response> {
  if (res.ok || !(res.headers.get('content-type') ?? '').includes('json')) return res;
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const isResult =
    typeof body === 'object' && body !== null && Array.isArray((body as { errors?: unknown }).errors);
  return new Response(text, {
    status: isResult ? 200 : res.status,
    statusText: isResult ? 'OK' : res.statusText,
    headers: res.headers,
  });
}

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
          return asGraphQLResult(await attempt());
        } catch (err) {
          if (err instanceof TypeError && isRead(init.body)) return asGraphQLResult(await attempt());
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
