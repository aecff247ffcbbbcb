import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from '../../../../lib/logger.ts';
import { runRouteCall } from '../acp/caller.ts';
import type { RouteReply, UcpHttpCall } from './call.ts';

/** UCP's error for a tool call that could not run (as the routes answer their own faults). */
const UNAVAILABLE = JSON.stringify({
  code: 'service_unavailable',
  content: 'The business cannot answer this now; retry shortly.',
});

/**
 * Runs one UCP call through its REST route in process, with the /mcp request's own Authorization
 * and trace context. The route's identity step verifies the key again, so it trusts nothing /mcp
 * says; the UCP-Agent it gets is the tool call's meta["ucp-agent"].
 */
export const runUcpCall = (
  app: FastifyInstance,
  log: Logger,
  req: FastifyRequest,
  basePath: string,
  call: UcpHttpCall,
): Promise<RouteReply> => runRouteCall(app, log, req, basePath, call, UNAVAILABLE);
