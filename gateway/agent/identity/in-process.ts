import { IncomingMessage } from 'node:http';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { IdentitySource } from '../state.ts';

/**
 * In-process agent calls: another face of the agent gateway (the MCP server at /mcp) runs a
 * call through the REST route itself, with `app.inject`, so it meets exactly the same chain.
 * The identity the outer request proved must reach the route's identity step, and nothing an
 * outsider sends may claim it.
 *
 * The marker is the class of the raw request object: light-my-request builds the injected
 * request as an instance of the `Request` class it is given, and this class is private to
 * this module. A request that arrives on a socket is always a plain `http.IncomingMessage`
 * made by Node's HTTP server, whatever headers, address or body it carries, so it can never
 * be an instance of this class. (A header with a secret value was the alternative: it can
 * leak into logs and proxies, and it is still something a client can send.)
 */
class InProcessAgentCall extends IncomingMessage {
  /**
   * How the outer request proved the identity (the audit records it for the call too). On the
   * prototype of a per-call subclass: light-my-request never runs the given class's constructor
   * (it copies its own request onto the class's prototype chain), so a field would stay unset.
   */
  declare readonly outerSource: IdentitySource | undefined;
}

/** Whether a raw request is an in-process agent call made by `injectAgentCall`. */
export const isInProcessAgentCall = (raw: unknown): boolean => raw instanceof InProcessAgentCall;

/** The identity source of the outer request of an in-process call; undefined for any other request. */
export const inProcessSource = (raw: unknown): IdentitySource | undefined =>
  raw instanceof InProcessAgentCall ? raw.outerSource : undefined;

/**
 * Runs one agent call in process as `identity` (a SPIFFE ID the caller has verified). The
 * identity travels as X-Spiffe-Id, set here in place of any the options carry; the
 * identity step believes that header only on a request carrying the marker.
 */
export function injectAgentCall(
  app: FastifyInstance,
  identity: string,
  options: InjectOptions,
  source?: IdentitySource,
): Promise<LightMyRequestResponse> {
  // A subclass per call carries the outer source; it is still an InProcessAgentCall.
  const Request = class extends InProcessAgentCall {};
  Object.defineProperty(Request.prototype, 'outerSource', { value: source });
  // Header names are case-insensitive: drop every spelling before setting the one identity.
  const headers = Object.fromEntries(
    Object.entries(options.headers ?? {}).filter(([name]) => name.toLowerCase() !== 'x-spiffe-id'),
  );
  return app.inject({
    ...options,
    headers: { ...headers, 'x-spiffe-id': identity },
    Request,
  } as InjectOptions);
}
