/**
 * A stand-in HTTP server for a service the code under test calls (a subgraph, in the gateway's
 * datasource tests): node:http on an ephemeral 127.0.0.1 port that keeps each request's headers
 * and JSON body and leaves the answer to the test.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest<B> {
  headers: IncomingMessage['headers'];
  body: B;
}

export interface JsonStub<B> {
  /** `http://127.0.0.1:<port>`, no path. */
  url: string;
  /** Every request so far, in arrival order (an empty body is kept as `{}`). */
  seen: SeenRequest<B>[];
  /** Drops open connections and stops listening; harmless when already closed. */
  close(): Promise<void>;
}

/**
 * Starts the stand-in; `handler` answers the n-th request (n from 1) once its body has been read
 * and recorded, and may also not answer, or break the connection.
 */
export async function startJsonStub<B = Record<string, unknown>>(
  handler: (req: IncomingMessage, res: ServerResponse, n: number, body: B) => void,
): Promise<JsonStub<B>> {
  const seen: SeenRequest<B>[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as B;
      seen.push({ headers: req.headers, body });
      handler(req, res, seen.length, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
