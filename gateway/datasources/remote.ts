import { STATUS_CODES } from 'node:http';
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { GraphQLError } from 'graphql';
import { Pool } from 'undici';
import type { RequestContext } from '../../lib/auth/context.ts';
import { isEntityFetch, splitEntities } from './merge.ts';

export const GATEWAY_SECRET_HEADER = 'x-gateway-secret';

/** A query-plan fetch that only reads: `{ … }` or `query …` (the planner writes no other form). */
const isRead = (query: string): boolean => {
  const q = query.trimStart();
  return q.startsWith('{') || q.startsWith('query');
};

/**
 * Connection-level failures that may be retried for a read: the request may not have reached
 * the subgraph (a keep-alive connection it had just closed, a refused connect). A timeout is
 * not one of them: the subgraph is slow, and a second call would double the wait.
 */
const NETWORK_ERRORS = new Set([
  'UND_ERR_SOCKET',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const isNetworkError = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && NETWORK_ERRORS.has(String((err as { code?: unknown }).code));

/** The call took longer than the data source's timeout (the reason its signal is aborted with). */
export class SubgraphTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * The subgraph could not be reached. @apollo/gateway puts a fetch's error message into the
 * client's response as it is, so the message names the subgraph only; the address and the
 * connection error (which carries an IP and port) stay in `cause`, out of the reply.
 */
export class SubgraphUnreachableError extends Error {
  override readonly name = 'SubgraphUnreachableError';
}

interface Reply {
  status: number;
  contentType: string;
  cacheControl: string | undefined;
  text: string;
}

/** Sharing of subgraph calls between callers (merge.ts); absent: every fetch is its own call. */
export interface FetchMerging {
  /** Whether a fetch's document selects a `@perCaller` field (merge.ts `perCallerCheck`). */
  perCaller(query: string): boolean;
  /** The most callers one batched entity call carries (default 32). */
  maxBatch?: number;
}

interface BatchEntry {
  representations: unknown[];
  resolve(result: GatewayGraphQLResponse | Reply): void;
  reject(err: unknown): void;
}

interface Batch {
  query: string;
  operationName: string | undefined;
  extensions: unknown;
  headers: Record<string, string>;
  entries: BatchEntry[];
}

/** The headers that may differ between callers whose fetches are shared: log correlation only. */
const NOT_IN_KEY = new Set(['x-trace-id']);
const headersKey = (headers: Record<string, string>): string => {
  let key = '';
  for (const name of Object.keys(headers).sort()) {
    if (!NOT_IN_KEY.has(name)) key += `${name}:${headers[name]}\n`;
  }
  return key;
};

/**
 * The gateway's call to a subgraph in the distributed topology: one POST of the fetch's query
 * and variables over a keep-alive pool (undici's, not Node's fetch: the WHATWG Request, Headers
 * and streams around each call cost the gateway more CPU than the rest of the hop), with
 *
 * - a per-call timeout covering the wait for a connection, the headers and the body (a retried
 *   read gets its own, so a read can take up to twice `SUBGRAPH_TIMEOUT_MS`);
 * - one retry of a read after a connection-level failure, never of a mutation;
 * - errors that name the subgraph, never its address (clients see them);
 * - the gateway secret that subgraphs require, the caller's X-Trace-Id and bearer token (each
 *   subgraph re-applies the role rules); OpenTelemetry's undici instrumentation adds
 *   `traceparent` when tracing is on;
 * - a subgraph's non-2xx GraphQL result handed on as the result it is. A subgraph answers 4xx
 *   with a GraphQL result when a resolver's error sets `extensions.http.status`
 *   (BAD_USER_INPUT 422, NOT_FOUND 404, …: Apollo Server's rule); the error then reaches the
 *   client with its code and reasons, as it does embedded. Any other non-2xx reply is an
 *   error, as @apollo/gateway's RemoteGraphQLDataSource makes it (`422: Unprocessable Entity`,
 *   UNAUTHENTICATED for 401, FORBIDDEN for 403);
 * - with `merging`, shared calls (merge.ts): a read that selects no `@perCaller` field, identical
 *   to one in flight (subgraph, query, variables, every header but X-Trace-Id), waits for that
 *   call's reply and parses its own copy; an entity read that selects one joins the entity reads
 *   of other callers with the same query and headers made in the same turn of the event loop,
 *   one call for all, each caller given back its own entities and errors. A shared call carries
 *   the first caller's X-Trace-Id.
 */
export class RemoteSubgraphDataSource implements GraphQLDataSource<RequestContext> {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly inFlight = new Map<string, Promise<Reply>>();
  private readonly batches = new Map<string, Batch>();

  constructor(
    private readonly name: string,
    url: string,
    private readonly secret: string,
    private readonly timeoutMs: number,
    private readonly merging?: FetchMerging,
  ) {
    const u = new URL(url);
    this.path = `${u.pathname}${u.search}`;
    // A reply's headers and body are bounded by the call's own timeout (the signal below).
    this.pool = new Pool(u.origin, { keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
  }

  async process(options: GraphQLDataSourceProcessOptions<RequestContext>): Promise<GatewayGraphQLResponse> {
    const { request } = options;
    const { query, variables, operationName, extensions } = request;
    if (!query) throw new Error('Missing query');
    const headers = this.headersFor(options);
    const read = isRead(query);
    let answer: GatewayGraphQLResponse | Reply;
    if (this.merging && read && !this.merging.perCaller(query)) {
      const body = JSON.stringify({ query, variables, operationName, extensions });
      answer = await this.shared(headers, body);
    } else if (this.merging && read && isEntityFetch(variables)) {
      answer = await this.batched(
        query,
        operationName,
        extensions,
        headers,
        variables?.representations as unknown[],
      );
    } else {
      answer = await this.call(
        headers,
        JSON.stringify({ query, variables, operationName, extensions }),
        read,
      );
    }
    const reply = 'text' in answer ? answer : undefined;
    if ('incomingRequestContext' in options) {
      const cacheControl = reply ? reply.cacheControl : (answer as { cacheControl?: string }).cacheControl;
      restrictCachePolicy(options.incomingRequestContext.overallCachePolicy, cacheControl);
    }
    if (reply) return this.resultOf(reply);
    const { cacheControl: _, ...result } = answer as GatewayGraphQLResponse & { cacheControl?: string };
    return result;
  }

  /** One call, with one retry of a read after a connection-level failure. */
  private async call(headers: Record<string, string>, body: string, read: boolean): Promise<Reply> {
    try {
      return await this.send(headers, body);
    } catch (err) {
      if (!isNetworkError(err) || !read) throw this.failure(err);
      try {
        return await this.send(headers, body);
      } catch (again) {
        throw this.failure(again);
      }
    }
  }

  /** The reply of an identical per-caller-free read in flight, or of a new call. */
  private shared(headers: Record<string, string>, body: string): Promise<Reply> {
    const key = `${headersKey(headers)}\n${body}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.call(headers, body, true).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** Joins the entity reads with the same query and headers made in this turn of the event loop. */
  private batched(
    query: string,
    operationName: string | undefined,
    extensions: unknown,
    headers: Record<string, string>,
    representations: unknown[],
  ): Promise<GatewayGraphQLResponse | Reply> {
    const key = `${headersKey(headers)}\n${operationName ?? ''}\n${JSON.stringify(extensions ?? null)}\n${query}`;
    let batch = this.batches.get(key);
    if (!batch) {
      batch = { query, operationName, extensions, headers, entries: [] };
      this.batches.set(key, batch);
      const scheduled = batch;
      setImmediate(() => {
        if (this.batches.get(key) === scheduled) this.batches.delete(key);
        void this.flush(scheduled);
      });
    }
    const b = batch;
    return new Promise((resolve, reject) => {
      b.entries.push({ representations, resolve, reject });
      if (b.entries.length >= (this.merging?.maxBatch ?? 32)) this.batches.delete(key);
    });
  }

  private async flush(batch: Batch): Promise<void> {
    const { entries } = batch;
    const representations = entries.flatMap((e) => e.representations);
    const body = JSON.stringify({
      query: batch.query,
      variables: { representations },
      operationName: batch.operationName,
      extensions: batch.extensions,
    });
    let reply: Reply;
    try {
      reply = await this.call(batch.headers, body, true);
    } catch (err) {
      for (const e of entries) e.reject(err);
      return;
    }
    if (entries.length === 1) {
      entries[0]?.resolve(reply);
      return;
    }
    let whole: GatewayGraphQLResponse;
    try {
      whole = this.resultOf(reply);
    } catch {
      // Not a GraphQL result: every caller gets the error a single call would have given it.
      for (const e of entries) e.resolve(reply);
      return;
    }
    const parts = splitEntities(
      whole,
      entries.map((e) => e.representations.length),
    );
    // A result without entities to split (the call failed as a whole) reaches every caller with
    // its errors only: no caller ever sees another's entities.
    const failed: GatewayGraphQLResponse = {
      data: null,
      errors: whole.errors?.length
        ? whole.errors
        : [{ message: `subgraph "${this.name}" answered no entities` }],
    };
    entries.forEach((e, i) => {
      e.resolve({ ...(parts?.[i] ?? failed), cacheControl: reply.cacheControl });
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** What a failed call becomes: a timeout as it is, anything else without the address. */
  private failure(err: unknown): Error {
    if (err instanceof SubgraphTimeoutError) return err;
    return new SubgraphUnreachableError(`subgraph "${this.name}" could not be reached`, { cause: err });
  }

  private headersFor(options: GraphQLDataSourceProcessOptions<RequestContext>): Record<string, string> {
    const headers: Record<string, string> = {};
    // Headers the gateway asks for (e.g. apollo-federation-include-trace with usage reporting).
    const asked = options.request.http?.headers;
    if (asked) for (const [name, value] of asked) headers[name] = value;
    headers['content-type'] = 'application/json';
    headers[GATEWAY_SECRET_HEADER] = this.secret;
    const context = options.context as RequestContext | undefined;
    if (context?.traceId) headers['x-trace-id'] = context.traceId;
    if (context?.bearer) headers.authorization = `Bearer ${context.bearer}`;
    return headers;
  }

  private async send(headers: Record<string, string>, body: string): Promise<Reply> {
    const deadline = new AbortController();
    const timer = setTimeout(
      () =>
        deadline.abort(
          new SubgraphTimeoutError(`subgraph "${this.name}" did not answer in ${this.timeoutMs} ms`),
        ),
      this.timeoutMs,
    );
    try {
      const res = await this.pool.request({
        method: 'POST',
        path: this.path,
        headers,
        body,
        signal: deadline.signal,
      });
      const text = await res.body.text();
      const cacheControl = res.headers['cache-control'];
      return {
        status: res.statusCode,
        contentType: String(res.headers['content-type'] ?? ''),
        cacheControl: Array.isArray(cacheControl) ? cacheControl.join(', ') : cacheControl,
        text,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  private resultOf(reply: Reply): GatewayGraphQLResponse {
    const json =
      reply.contentType.startsWith('application/json') ||
      reply.contentType.startsWith('application/graphql-response+json');
    const body: unknown = json ? parseOrText(reply.text) : reply.text;
    const ok = reply.status >= 200 && reply.status < 300;
    const isResult = typeof body === 'object' && body !== null && !Array.isArray(body);
    if (ok && isResult) return body as GatewayGraphQLResponse;
    if (!ok && isResult && Array.isArray((body as { errors?: unknown }).errors)) {
      return body as GatewayGraphQLResponse;
    }
    if (ok) throw new Error(`Expected JSON response body, but received: ${reply.text}`);
    const statusText = STATUS_CODES[reply.status] ?? '';
    throw new GraphQLError(`${reply.status}: ${statusText}`, {
      extensions: {
        ...(reply.status === 401 ? { code: 'UNAUTHENTICATED' } : {}),
        ...(reply.status === 403 ? { code: 'FORBIDDEN' } : {}),
        response: { subgraph: this.name, status: reply.status, statusText, body },
      },
    });
  }
}

const parseOrText = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** The subgraph's Cache-Control narrows the operation's cache policy, as RemoteGraphQLDataSource does. */
function restrictCachePolicy(policy: unknown, header: string | undefined): void {
  if (typeof policy !== 'object' || policy === null || !('restrict' in policy)) return;
  const hint: { maxAge: number; scope?: 'PUBLIC' | 'PRIVATE' } = { maxAge: 0 };
  for (const directive of (header ?? '').split(',')) {
    const [name = '', value] = directive.trim().split('=');
    const key = name.toLowerCase();
    if (key === 'max-age' && value && /^[0-9]+$/.test(value)) hint.maxAge = Number(value);
    else if (key === 'private') hint.scope = 'PRIVATE';
    else if (key === 'public') hint.scope = 'PUBLIC';
  }
  (policy as { restrict(hint: object): void }).restrict(hint as object);
}
