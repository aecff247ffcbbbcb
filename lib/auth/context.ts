import { anonymous, type Caller } from './caller.ts';

/**
 * The GraphQL context of one request. The gateway builds it; in the embedded topology it is
 * handed to the subgraphs unchanged, in the distributed one each subgraph rebuilds it from the
 * forwarded bearer token after checking the gateway secret.
 */
export interface RequestContext {
  readonly caller: Caller;
  readonly traceId: string;
  /** Raw bearer token, forwarded to subgraphs in the distributed topology. */
  readonly bearer?: string;
  /** Per-request memo (dataloaders) keyed by owner; see lib/graphql/loaders.ts. */
  readonly memo: Map<unknown, unknown>;
}

export function requestContext(partial: Partial<RequestContext> = {}): RequestContext {
  return { caller: anonymous, traceId: 'unknown-trace', memo: new Map(), ...partial };
}

/** A per-request value created once (e.g. a DataLoader), shared by all resolvers of the request. */
export function perRequest<T>(ctx: RequestContext, key: unknown, create: () => T): T {
  let v = ctx.memo.get(key) as T | undefined;
  if (v === undefined) {
    v = create();
    ctx.memo.set(key, v);
  }
  return v;
}
