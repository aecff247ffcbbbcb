/**
 * The distributed gateway's call to a subgraph (gateway/datasources/remote.ts), against real
 * HTTP servers that misbehave on purpose: what it sends, its timeout, which calls it retries,
 * and how a subgraph's non-2xx replies come back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RemoteSubgraphDataSource,
  SubgraphTimeoutError,
  SubgraphUnreachableError,
} from '../../gateway/datasources/remote.ts';
import { requestContext } from '../../lib/auth/context.ts';
import { type JsonStub, startJsonStub } from '../support/json-stub.ts';

const SECRET = 'remote-datasource-secret';
const READ = 'query Q__pricing__0($sku: ID!) { price(sku: $sku) { amount } }';
const WRITE = 'mutation M__pricing__0 { setBasePrice(input: {}) { sku } }';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

const open: { stub: JsonStub<unknown>; source: RemoteSubgraphDataSource }[] = [];

afterEach(async () => {
  for (const { stub, source } of open.splice(0)) {
    await source.close();
    await stub.close();
  }
});

/** A subgraph stand-in on an ephemeral port; `handler` answers the n-th request (from 1). */
async function subgraph(handler: Handler, timeoutMs = 2000) {
  const stub = await startJsonStub<{ query?: string; variables?: unknown; operationName?: string }>(handler);
  const source = new RemoteSubgraphDataSource('pricing', `${stub.url}/graphql`, SECRET, timeoutMs);
  open.push({ stub, source });
  return { source, seen: stub.seen, stub };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

const call = (
  source: RemoteSubgraphDataSource,
  query: string,
  opts: { bearer?: string; policy?: { restrict(hint: object): void } } = {},
) =>
  source.process({
    kind: 'incoming operation',
    request: { query, variables: { sku: 'SKU-1' }, operationName: 'Q__pricing__0' },
    context: requestContext({ traceId: 'trace-123', ...(opts.bearer ? { bearer: opts.bearer } : {}) }),
    incomingRequestContext: { overallCachePolicy: opts.policy },
  } as never);

describe('the gateway’s HTTP call to a subgraph', () => {
  it('posts the fetch’s query and variables with the gateway secret, X-Trace-Id and the caller’s bearer', async () => {
    const { source, seen } = await subgraph((_req, res) =>
      json(res, 200, { data: { price: { amount: 1 } } }),
    );
    const reply = await call(source, READ, { bearer: 'abc.def.ghi' });
    expect(reply).toEqual({ data: { price: { amount: 1 } } });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers['x-gateway-secret']).toBe(SECRET);
    expect(seen[0]?.headers['x-trace-id']).toBe('trace-123');
    expect(seen[0]?.headers.authorization).toBe('Bearer abc.def.ghi');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(seen[0]?.body).toEqual({
      query: READ,
      variables: { sku: 'SKU-1' },
      operationName: 'Q__pricing__0',
    });
  });

  it('sends no Authorization header for an anonymous caller', async () => {
    const { source, seen } = await subgraph((_req, res) => json(res, 200, { data: {} }));
    await call(source, READ);
    expect(seen[0]?.headers.authorization).toBeUndefined();
  });

  it('hands on a 4xx GraphQL result as the result it is, code and reasons included', async () => {
    const errors = [
      { message: 'bad rule', extensions: { code: 'BAD_USER_INPUT', errors: [{ path: '/x' }] } },
    ];
    const { source } = await subgraph((_req, res) => json(res, 422, { data: null, errors }));
    await expect(call(source, WRITE)).resolves.toEqual({ data: null, errors });
  });

  it('turns a non-2xx reply that is not a GraphQL result into an error naming the status', async () => {
    const { source } = await subgraph((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('upstream down');
    });
    const err = await call(source, READ).catch((e: unknown) => e);
    expect(err).toMatchObject({
      message: '502: Bad Gateway',
      extensions: { response: { subgraph: 'pricing', status: 502, body: 'upstream down' } },
    });
    // Clients see this error: it names the subgraph, never its address.
    expect(JSON.stringify(err)).not.toContain('127.0.0.1');
  });

  it('marks a 401 that is not a GraphQL result UNAUTHENTICATED', async () => {
    const { source } = await subgraph((_req, res) => json(res, 401, { message: 'no' }));
    await expect(call(source, READ)).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('refuses a 2xx reply whose body is not JSON', async () => {
    const { source } = await subgraph((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>');
    });
    await expect(call(source, READ)).rejects.toThrow('Expected JSON response body, but received: <html>');
  });

  it('gives up after its timeout when the subgraph does not answer, and does not retry', async () => {
    const { source, seen } = await subgraph(() => {}, 200);
    const started = performance.now();
    const err = await call(source, READ).catch((e: unknown) => e);
    const took = performance.now() - started;
    expect(err).toBeInstanceOf(SubgraphTimeoutError);
    expect((err as Error).message).toBe('subgraph "pricing" did not answer in 200 ms');
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(1500);
    expect(seen).toHaveLength(1);
  });

  it('counts the body against the same timeout: headers sent, then nothing', async () => {
    const { source } = await subgraph((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
    }, 200);
    await expect(call(source, READ)).rejects.toBeInstanceOf(SubgraphTimeoutError);
  });

  it('retries a read once when the connection fails before an answer', async () => {
    const { source, seen } = await subgraph((req, res, n) => {
      if (n === 1) req.socket.destroy();
      else json(res, 200, { data: { price: { amount: 2 } } });
    });
    await expect(call(source, READ)).resolves.toEqual({ data: { price: { amount: 2 } } });
    expect(seen).toHaveLength(2);
  });

  it('retries a read only once', async () => {
    const { source, seen } = await subgraph((req) => req.socket.destroy());
    const err = await call(source, READ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubgraphUnreachableError);
    expect(seen).toHaveLength(2);
  });

  it('never retries a mutation', async () => {
    const { source, seen } = await subgraph((req, res, n) => {
      if (n === 1) req.socket.destroy();
      else json(res, 200, { data: { setBasePrice: { sku: 'SKU-1' } } });
    });
    await expect(call(source, WRITE)).rejects.toBeInstanceOf(SubgraphUnreachableError);
    expect(seen).toHaveLength(1);
  });

  it('names the subgraph, not its address, when it cannot be reached (the cause keeps the address)', async () => {
    const { source, stub } = await subgraph(() => {});
    await stub.close();
    const err = (await call(source, READ).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(SubgraphUnreachableError);
    expect(err.message).toBe('subgraph "pricing" could not be reached');
    expect(String((err.cause as Error).message ?? err.cause)).toMatch(/ECONNREFUSED|127\.0\.0\.1/);
  });

  it('passes on the headers the gateway asks for, and treats a missing Cache-Control as uncacheable', async () => {
    const { source, seen } = await subgraph((_req, res) => json(res, 200, { data: {} }));
    const hints: object[] = [];
    await source.process({
      kind: 'incoming operation',
      request: {
        query: READ,
        http: { method: 'POST', url: '', headers: new Map([['apollo-federation-include-trace', 'ftv1']]) },
      },
      context: requestContext({}),
      incomingRequestContext: { overallCachePolicy: { restrict: (hint: object) => hints.push(hint) } },
    } as never);
    expect(seen[0]?.headers['apollo-federation-include-trace']).toBe('ftv1');
    expect(hints).toEqual([{ maxAge: 0 }]);
  });

  it('narrows the operation’s cache policy by the subgraph’s Cache-Control', async () => {
    const { source } = await subgraph((_req, res) =>
      json(res, 200, { data: {} }, { 'cache-control': 'max-age=60, private' }),
    );
    const hints: object[] = [];
    await call(source, READ, { policy: { restrict: (hint) => hints.push(hint) } });
    expect(hints).toEqual([{ maxAge: 60, scope: 'PRIVATE' }]);
  });
});
