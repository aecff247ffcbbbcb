import type { FastifyReply, FastifyRequest } from 'fastify';
import { isProcurementAgent, parseSpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Logger } from '../../../lib/logger.ts';
import { isSecretKeyShaped } from '../../../subgraphs/procurement/api-keys/key.ts';
import { bindingAllows } from '../../../subgraphs/procurement/api-keys/profile-binding.ts';
import type { CheckoutApiKey } from '../../../subgraphs/procurement/api-keys/types.ts';
import {
  UCP_SCOPE_OF,
  type UcpOperationGroup,
} from '../../../subgraphs/procurement/identity-linking/scopes.ts';
import type { LinkedCaller } from '../../oauth/access-token.ts';
import type { LinkingParts } from '../../oauth/index.ts';
import type { ApiKeyVerifier } from '../identity/api-key.ts';
import { type CheckoutRehearsals, WARM_UP_AGENT, WARM_UP_AGENT_PATH, warmUpIdentity } from '../rehearsal.ts';
import { ORDER_CREATE_SCOPE, type ScopePolicy } from '../scope/policy.ts';
import { freshState } from '../state.ts';
import { parseUcpAgent } from './agent-header.ts';
import { sendUcpError, ucpError } from './errors.ts';
import type { PlatformProfile, ProfileFetcher } from './platform-profile.ts';
import { AP2, BUSINESS_CAPABILITIES, negotiate } from './profile.ts';
import { UCP_VERSION } from './schema/index.ts';
import type { UcpSignatureVerifier } from './signature.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The UCP call's platform: its profile URL, the fetched profile, the negotiated capabilities. */
    ucp?: {
      profileUrl: string;
      profile?: PlatformProfile;
      negotiated?: Map<string, string>;
      /** The API key the call came with (absent when it was signed). */
      key?: CheckoutApiKey;
      /** Scopes the credential itself carries (a key's); undefined: the policy's grants alone. */
      keyScopes?: readonly string[];
      /** The agent id its orders carry. */
      agentId?: string;
      /** The linked platform, when the call came with an identity-linking access token. */
      linked?: LinkedCaller;
    };
  }
}

/**
 * Step 0 (onRequest, first): `UCP-Agent` is required on every call (checkout-rest.md, "Specific
 * Header Requirements"); missing, not an RFC 8941 dictionary with a `profile` string, or a
 * profile URL this business would not fetch (not https, credentials, a private host) is 400
 * `invalid_profile_url`, before anything else is looked at (nothing is fetched here: the
 * profile step does that after identity).
 */
export function ucpAgentStep(profiles: Pick<ProfileFetcher, 'check'>, rehearsals?: CheckoutRehearsals) {
  return async function ucpAgent(req: FastifyRequest, reply: FastifyReply) {
    req.agent = freshState();
    // The warm-up's own call (gateway/agent/rehearsal.ts): its platform is a profile held here,
    // listing what this business offers but AP2 (nothing is fetched); identity follows.
    if (rehearsals?.of(req)) {
      req.ucp = { profileUrl: WARM_UP_PROFILE.url, profile: WARM_UP_PROFILE };
      return;
    }
    const refuse = (content: string) => {
      req.agent.reason = `ucp: ${content}`;
      return sendUcpError(reply, ucpError(400, 'invalid_profile_url', content));
    };
    const h = parseUcpAgent(req.headers['ucp-agent']);
    if (!h.ok) return refuse(`${h.reason}.`);
    const bad = profiles.check(h.profileUrl);
    if (bad) return refuse(bad.content);
    req.ucp = { profileUrl: h.profileUrl };
  };
}

/** RFC 6750 §3 challenge parameters of identity linking (identity-linking.md, "Error Handling"). */
export interface UcpChallenge {
  /** The issuer: the challenge's `realm`, byte for byte as in the RFC 8414 metadata. */
  readonly issuer: string;
  /** RFC 9728 metadata URL, `resource_metadata`. */
  readonly resourceMetadata: string;
}

const quoted = (v: string) => `"${v.replace(/["\\]/g, '')}"`;

/** `WWW-Authenticate: Bearer …` with realm and resource_metadata, and the parameters given. */
export function bearerChallenge(c: UcpChallenge | undefined, params: Record<string, string> = {}): string {
  const all: Record<string, string> = { realm: c?.issuer ?? 'ucp', ...params };
  if (c) all.resource_metadata = c.resourceMetadata;
  return `Bearer ${Object.entries(all)
    .map(([k, v]) => `${k}=${quoted(v)}`)
    .join(', ')}`;
}

/** 401 identity_required (with error="invalid_token" when a token was sent and refused). */
function identityRequired(c: UcpChallenge | undefined, content: string, invalid?: string) {
  return ucpError(401, 'identity_required', content, {
    headers: {
      'www-authenticate': bearerChallenge(
        c,
        invalid ? { error: 'invalid_token', error_description: invalid } : {},
      ),
    },
    messages: [{ type: 'error', code: 'identity_required', content, severity: 'requires_buyer_review' }],
  });
}

const BEARER_TOKEN = /^bearer (\S+)$/i;

/** The warm-up's platform profile (ucpAgentStep): every capability of this business but AP2. */
const WARM_UP_PROFILE: PlatformProfile = {
  url: 'https://warm-up.invalid/profile.json',
  version: UCP_VERSION,
  capabilities: new Map(
    BUSINESS_CAPABILITIES.filter((c) => c.name !== AP2).map((c) => [c.name, [UCP_VERSION]]),
  ),
  signingKeys: [],
};

/** 401 for a credential of the warm-up's reserved identity on a call that is not the warm-up's. */
function reservedForWarmUp(req: FastifyRequest, reply: FastifyReply) {
  req.agent.reason = 'identity: reserved for the warm-up';
  return sendUcpError(
    reply,
    ucpError(401, 'unauthorized', 'Authorization failed: this identity is reserved for the warm-up.'),
  );
}

/**
 * Step 1 for UCP (onRequest): the platform proves who it is with a checkout API key
 * (`Authorization: Bearer acp_…`, the ACP issue's key store: the key is bound to one agent
 * identity and its scopes, and bound to the platform's profile: keyProfileRefusal), with an
 * identity-linking access token (any other bearer: an RFC 9068 JWT checked in process, no I/O;
 * it acts as the agent identity the buyer linked, narrowed to the token's scopes) or with an
 * RFC 9421 signature by a key in its own profile (./signature.ts). Either way the call becomes
 * an agent identity, so every later step (scope, block, rate limit, spend, approval, audit)
 * applies as on /v2. None: 401 `identity_required` with an RFC 6750 challenge; a failed one: 401.
 */
export function ucpIdentityStep(
  keys: ApiKeyVerifier,
  signatures: UcpSignatureVerifier,
  log: Logger,
  linking?: LinkingParts,
  rehearsals?: CheckoutRehearsals,
) {
  const warmUp = rehearsals ? warmUpIdentity(rehearsals.trustDomain) : undefined;
  return async function identity(req: FastifyRequest, reply: FastifyReply) {
    const ucp = req.ucp;
    if (!ucp) return;
    if (warmUp && ucp.profile === WARM_UP_PROFILE) {
      // Only the agent step gives this profile, and only to the warm-up's own calls.
      req.agent.identity = warmUp;
      req.agent.identitySource = 'api-key';
      req.agent.rehearsal = true;
      ucp.keyScopes = [ORDER_CREATE_SCOPE];
      ucp.agentId = WARM_UP_AGENT;
      return;
    }
    const authorization = req.headers.authorization;
    const bearer = authorization === undefined ? undefined : BEARER_TOKEN.exec(authorization)?.[1];
    if (linking && bearer !== undefined && !isSecretKeyShaped(bearer))
      return linkedIdentity(linking, bearer, req, reply);
    if (authorization !== undefined) {
      const v = await keys.verify(authorization);
      if (v.ok && v.id.path === WARM_UP_AGENT_PATH) return reservedForWarmUp(req, reply);
      if (v.ok) {
        const refused = keyProfileRefusal(v.key, ucp.profileUrl);
        if (refused) {
          req.agent.reason = `identity: ${refused.reason}`;
          return sendUcpError(reply, ucpError(403, 'profile_not_trusted', refused.content));
        }
        req.agent.identity = v.id;
        req.agent.identitySource = 'api-key';
        ucp.key = v.key;
        ucp.keyScopes = v.key.scopes;
        ucp.agentId = v.key.agentId;
        return;
      }
      req.agent.reason = `identity: ${v.reason}`;
      log.warn({ traceId: req.traceId, reason: v.reason }, 'UCP caller not authenticated');
      return sendUcpError(
        reply,
        ucpError(401, 'unauthorized', `Authorization failed: ${v.reason}.`, {
          headers: { 'www-authenticate': bearerChallenge(linking, { error: 'invalid_token' }) },
        }),
      );
    }
    if (req.headers.signature !== undefined || req.headers['signature-input'] !== undefined) {
      const v = await signatures.verify(req, ucp.profileUrl);
      if (v.ok && v.id.path === WARM_UP_AGENT_PATH) return reservedForWarmUp(req, reply);
      if (v.ok) {
        req.agent.identity = v.id;
        req.agent.identitySource = 'signature';
        ucp.profile = v.profile;
        ucp.agentId = v.agentId;
        if (v.digest) req.agent.signedDigest = { expected: v.digest, checked: false };
        return;
      }
      req.agent.reason = `identity: ${v.code}: ${v.content}`;
      const headers = v.retryAfterS !== undefined ? { 'retry-after': String(v.retryAfterS) } : undefined;
      return sendUcpError(reply, ucpError(v.status, v.code, v.content, headers ? { headers } : {}));
    }
    req.agent.reason = 'identity: no credential';
    return sendUcpError(
      reply,
      identityRequired(
        linking,
        'User identity is required: link the account (OAuth 2.0, see /.well-known/oauth-authorization-server), sign the request (RFC 9421) or send an API key.',
      ),
    );
  };
}

/**
 * An identity-linking access token (gateway/oauth/access-token.ts, checked in process): refused
 * 401 `identity_required` with `error="invalid_token"`; bound to the client's profile (403
 * `profile_not_trusted` for another, before any fetch, as for a key); else the call acts as the
 * linked agent identity with the token's agent scopes.
 */
async function linkedIdentity(
  linking: LinkingParts,
  bearer: string,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const ucp = req.ucp;
  if (!ucp) return;
  const v = await linking.tokens.verify(bearer);
  const id = v.ok ? parseSpiffeId(v.caller.spiffeId) : undefined;
  if (!v.ok || !id?.ok || !isProcurementAgent(id.value, linking.trustDomains)) {
    const reason = v.ok ? 'the linked identity is outside the trusted domains' : v.reason;
    req.agent.reason = `identity: ${reason}`;
    return sendUcpError(
      reply,
      identityRequired(linking, 'The access token is not valid here: link the account again.', reason),
    );
  }
  if (id.value.path === WARM_UP_AGENT_PATH) return reservedForWarmUp(req, reply);
  if (!bindingAllows(v.caller.ucpProfile, ucp.profileUrl)) {
    req.agent.reason = `identity: client ${v.caller.clientId} is bound to ${v.caller.ucpProfile}, not to ${ucp.profileUrl.slice(0, 200)}`;
    return sendUcpError(
      reply,
      ucpError(403, 'profile_not_trusted', "This platform's link is not bound to the profile in UCP-Agent."),
    );
  }
  req.agent.identity = id.value;
  req.agent.identitySource = 'oauth';
  ucp.keyScopes = v.caller.agentScopes;
  ucp.agentId = v.caller.agentId;
  ucp.linked = v.caller;
}

/**
 * Identity binding (overview.md, "Identity Binding"): for an API key the business MUST confirm
 * that the key's principal may act for the profile in `UCP-Agent`, and reject a conflict. A key
 * is bound to a profile URL or origin when it is issued (subgraphs/procurement/api-keys/
 * profile-binding.ts); a key without a binding cannot be confirmed for any profile, so UCP
 * refuses it (ACP, which has no profile, takes it). Both are 403 `profile_not_trusted`, the
 * registry's code for a profile the business has not approved (signatures.md, "Error Handling").
 * Pure.
 */
export function keyProfileRefusal(
  key: Pick<CheckoutApiKey, 'id' | 'ucpProfile'>,
  profileUrl: string,
): { reason: string; content: string } | undefined {
  if (key.ucpProfile === null)
    return {
      reason: `key ${key.id} is not bound to a UCP platform profile`,
      content:
        'This API key is not bound to a platform profile: ask the business for a key bound to your profile (URL or origin).',
    };
  if (!bindingAllows(key.ucpProfile, profileUrl))
    return {
      reason: `key ${key.id} is bound to ${key.ucpProfile}, not to ${profileUrl.slice(0, 200)}`,
      content: 'This API key is not bound to the profile in UCP-Agent.',
    };
  return undefined;
}

/**
 * Step 2 for UCP: the identity's grants from the scope policy, narrowed by the credential's own
 * scopes (a key's, or a linked token's). Every checkout and cart operation needs `orders:create`,
 * reading an order `orders:read`. A linked token must also carry the operation group's own UCP
 * scope (`checkout:manage`, `cart:manage`, `order:read`): a token granted checkout only builds
 * no cart, and one granted cart only completes no checkout. Refused: 403 `insufficient_scope`
 * with the RFC 6750 challenge naming the full UCP scope set the operation needs
 * (identity-linking.md, "insufficient_scope").
 */
export function ucpScopeStep(
  policy: ScopePolicy,
  required: string,
  group: UcpOperationGroup,
  challenge?: UcpChallenge,
) {
  const ucpScope = UCP_SCOPE_OF[group];
  return async function authorize(req: FastifyRequest, reply: FastifyReply) {
    const id = req.agent.identity;
    if (!id || !req.ucp) return;
    const keyScopes = req.ucp.keyScopes;
    const linked = req.ucp.linked;
    if (
      policy.grants(id).has(required) &&
      (keyScopes === undefined || keyScopes.includes(required)) &&
      (linked === undefined || linked.ucpScopes.includes(ucpScope))
    )
      return;
    const tokenLacks = linked !== undefined && !linked.ucpScopes.includes(ucpScope);
    req.agent.reason = tokenLacks
      ? `scope: ${ucpScope} not in the access token`
      : `scope: ${required} not granted`;
    const content = `This operation requires scopes: ${ucpScope}`;
    return sendUcpError(
      reply,
      ucpError(403, 'insufficient_scope', content, {
        headers: {
          'www-authenticate': bearerChallenge(challenge, { error: 'insufficient_scope', scope: ucpScope }),
        },
        messages: [{ type: 'error', code: 'insufficient_scope', content, severity: 'requires_buyer_review' }],
      }),
    );
  };
}

/**
 * Step 4' (onRequest, after rate limit): the platform profile, fetched and validated (cached),
 * its protocol version checked (422 `version_unsupported`), and the capabilities negotiated.
 * A profile without the checkout capability at our version leaves no checkout to speak of: the
 * business outcome `capabilities_incompatible`, HTTP 200 with an error_response.
 */
export function ucpProfileStep(profiles: ProfileFetcher, root: string, continueUrl: string) {
  return async function profile(req: FastifyRequest, reply: FastifyReply) {
    const ucp = req.ucp;
    if (!ucp) return;
    if (!ucp.profile) {
      const r = await profiles.resolve(ucp.profileUrl);
      if (!r.ok) {
        req.agent.reason = `ucp: ${r.code}: ${r.content}`;
        return sendUcpError(reply, ucpError(r.status, r.code, r.content, { continue_url: continueUrl }));
      }
      ucp.profile = r.profile;
    }
    if (ucp.profile.version !== UCP_VERSION) {
      req.agent.reason = `ucp: version ${ucp.profile.version} unsupported`;
      return sendUcpError(
        reply,
        ucpError(
          422,
          'version_unsupported',
          `Protocol version ${ucp.profile.version.slice(0, 32)} is not supported. This business supports version ${UCP_VERSION}.`,
          { continue_url: continueUrl },
        ),
      );
    }
    ucp.negotiated = negotiate(ucp.profile.capabilities);
    if (!ucp.negotiated.has(root)) {
      req.agent.reason = `ucp: capabilities incompatible (${root})`;
      return reply
        .code(200)
        .type('application/json')
        .send(
          JSON.stringify({
            ucp: { version: UCP_VERSION, status: 'error', capabilities: {} },
            messages: [
              {
                type: 'error',
                code: 'capabilities_incompatible',
                content: `The platform profile does not list ${root} at version ${UCP_VERSION}.`,
                severity: 'unrecoverable',
              },
            ],
            continue_url: continueUrl,
          }),
        );
    }
  };
}
