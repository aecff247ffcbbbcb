/**
 * POST /console/dev-token: the console's one-click sign-in of the embedded development default.
 * It mints what `npm run token` mints, with the same development key, for the operator roles.
 * Registered only in the embedded topology, without AUTH_JWKS_URL and outside production
 * (registerConsole decides), and it answers loopback callers only: a development gateway bound
 * to 0.0.0.0 must not hand operator tokens to its network. Loopback is not enough: a web page
 * that re-points its own name to 127.0.0.1 (DNS rebinding) calls from loopback too, same-origin
 * in the browser; its requests name the page's host in Host and Origin, so both must name this
 * system (lib/http/served-hosts.ts). A browser always sends Origin on a POST; a request without
 * one is not a page's (curl, a script on this machine, which loopback already lets in).
 */
import type { FastifyInstance } from 'fastify';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import type { Config } from '../../lib/config.ts';
import { foreignOrigin, hostNotServed, type ServedHosts } from '../../lib/http/served-hosts.ts';
import { isLoopbackAddress } from '../../lib/net/address.ts';
import { Problem, sendProblem } from '../../lib/problem.ts';

/** Every operator role the console's pages use (docs/console.md lists where each is needed). */
export const DEV_OPERATOR_ROLES = [
  'agents:read',
  'agents:admin',
  'audit:read',
  'catalog:admin',
  'orders:read',
  'orders:approve',
  'pricing:admin',
  'promotions:read',
  'promotions:admin',
  'spend:read',
  'spend:admin',
  'webhooks:admin',
] as const;

export const DEV_TOKEN_SUBJECT = 'console-developer';
const TTL_SECONDS = 3600;

export async function registerDevToken(
  scope: FastifyInstance,
  config: Config,
  served: ServedHosts,
): Promise<void> {
  scope.post('/console/dev-token', async (req, reply) => {
    if (!isLoopbackAddress(req.socket.remoteAddress ?? ''))
      return sendProblem(
        reply,
        new Problem(
          403,
          'dev-token-loopback-only',
          'Forbidden',
          'Development tokens are minted for loopback callers only.',
        ),
      );
    if (!served.host(req.headers.host)) return sendProblem(reply, hostNotServed('The development token'));
    const origin = req.headers.origin;
    if (origin !== undefined && !served.origin(origin, req.headers.host))
      return sendProblem(reply, foreignOrigin());
    const token = await mintDevToken(config, {
      subject: DEV_TOKEN_SUBJECT,
      roles: [...DEV_OPERATOR_ROLES],
      ttlSeconds: TTL_SECONDS,
    });
    reply.header('cache-control', 'no-store');
    return {
      token,
      subject: DEV_TOKEN_SUBJECT,
      roles: DEV_OPERATOR_ROLES,
      expires_at: new Date(Date.now() + TTL_SECONDS * 1000).toISOString(),
    };
  });
}
