/**
 * The warm-up's reserved identity (`…/procurement-agent/warm-up`, gateway/agent/rehearsal.ts) is
 * refused 401 on the UCP endpoint whatever credential names it (README, `WARM_UP_ORDERS`:
 * "refused 401 to anyone else"; docs/procurement.md, step 1½): an API key bound to it is tested
 * on the embedded system (test/foundation/warm-up-orders.test.ts); here the other two ways the
 * UCP identity step (gateway/agent/ucp/identity.ts) takes a caller, with verifiers that answer
 * that identity: an identity-linking access token whose client acts as it, and an RFC 9421
 * signature verified as it. Either, taken, would reach the handler (200 here).
 */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { ApiKeyVerifier } from '../../gateway/agent/identity/api-key.ts';
import { WARM_UP_AGENT_PATH } from '../../gateway/agent/rehearsal.ts';
import { freshState } from '../../gateway/agent/state.ts';
import { ucpIdentityStep } from '../../gateway/agent/ucp/identity.ts';
import type { PlatformProfile } from '../../gateway/agent/ucp/platform-profile.ts';
import type { UcpSignatureVerifier } from '../../gateway/agent/ucp/signature.ts';
import type { LinkingParts } from '../../gateway/oauth/index.ts';
import { parseSpiffeId } from '../../lib/auth/spiffe.ts';
import { createLogger } from '../../lib/logger.ts';

const log = createLogger({ LOG_LEVEL: 'silent' });
const PROFILE = 'https://platform.example/profile.json';
const TRUST_DOMAIN = 'example.org';
const WARM_UP = `spiffe://${TRUST_DOMAIN}${WARM_UP_AGENT_PATH}`;
const OTHER = `spiffe://${TRUST_DOMAIN}/ns/ai/sa/procurement-agent/linked-1`;

const spiffeOf = (id: string) => {
  const p = parseSpiffeId(id);
  if (!p.ok) throw new Error(p.reason);
  return p.value;
};

const noKeys = {
  verify: async () => ({ ok: false, reason: 'no key expected here' }),
} as unknown as ApiKeyVerifier;

const linking = (spiffeId: string): LinkingParts =>
  ({
    issuer: 'https://shop.example/oauth',
    resourceMetadata: 'https://shop.example/.well-known/oauth-protected-resource',
    trustDomains: [TRUST_DOMAIN],
    tokens: {
      verify: async () => ({
        ok: true,
        caller: {
          clientId: 'client-1',
          grantId: 'grant-1',
          subject: 'buyer-admin',
          spiffeId,
          agentId: 'linked-agent',
          ucpScopes: ['ucp:scopes:checkout_session'],
          agentScopes: ['orders:create'],
          ucpProfile: PROFILE,
        },
      }),
    },
  }) as unknown as LinkingParts;

const signatures = (spiffeId: string): UcpSignatureVerifier => ({
  verify: async () =>
    ({
      ok: true,
      id: spiffeOf(spiffeId),
      agentId: 'ucp-platform.example',
      profile: { url: PROFILE } as unknown as PlatformProfile,
      digest: undefined,
    }) as Awaited<ReturnType<UcpSignatureVerifier['verify']>>,
});

async function call(spiffeId: string, headers: Record<string, string>) {
  const app = Fastify();
  const identity = ucpIdentityStep(noKeys, signatures(spiffeId), log, linking(spiffeId));
  app.get('/checkout-sessions', {
    onRequest: [
      async (req: FastifyRequest) => {
        req.agent = freshState();
        req.ucp = { profileUrl: PROFILE };
      },
      identity,
    ],
    handler: async (req: FastifyRequest, reply: FastifyReply) =>
      reply.send({ identity: req.agent.identity?.id }),
  });
  const res = await app.inject({ method: 'GET', url: '/checkout-sessions', headers });
  await app.close();
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

const CREDENTIALS: [string, Record<string, string>][] = [
  ['an identity-linking access token', { authorization: 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln' }],
  ['an RFC 9421 signature', { signature: 'sig1=:AAAA:', 'signature-input': 'sig1=("@method");keyid="k"' }],
];

describe('the warm-up identity on the UCP endpoint', () => {
  it.each(CREDENTIALS)('is refused 401 when %s names it', async (_what, headers) => {
    const r = await call(WARM_UP, headers);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 'unauthorized' });
    expect(JSON.stringify(r.body)).toContain('reserved for the warm-up');
  });

  it.each(CREDENTIALS)('while %s naming another agent is taken (the control)', async (_what, headers) => {
    const r = await call(
      OTHER.replace('linked-1', headers.signature ? 'ucp/platform.example' : 'linked-1'),
      headers,
    );
    expect(r.status).toBe(200);
    expect(String(r.body.identity)).toMatch(/^spiffe:\/\/example\.org\/ns\/ai\/sa\/procurement-agent\//);
  });
});
