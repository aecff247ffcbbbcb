/**
 * POST /console/dev-token: the console's one-click sign-in of the embedded development default.
 * It mints what `npm run token` mints, with the same development key, for the operator roles.
 * Registered only in the embedded topology, without AUTH_JWKS_URL and outside production
 * (registerConsole decides), and it answers loopback callers only: a development gateway bound
 * to 0.0.0.0 must not hand operator tokens to its network.
 */
import type { FastifyInstance } from 'fastify';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import type { Config } from '../../lib/config.ts';
import { Problem, sendProblem } from '../../lib/problem.ts';

/** Every operator role the console's pages use (docs/console.md lists where each is needed). */
export const DEV_OPERATOR_ROLES = [
  'agents:read',
  'agents:admin',
  'audit:read',
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
const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

export async function registerDevToken(scope: FastifyInstance, config: Config): Promise<void> {
  scope.post('/console/dev-token', async (req, reply) => {
    if (!LOOPBACK.test(req.socket.remoteAddress ?? ''))
      return sendProblem(
        reply,
        new Problem(
          403,
          'dev-token-loopback-only',
          'Forbidden',
          'Development tokens are minted for loopback callers only.',
        ),
      );
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
