import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Provider } from 'oidc-provider';
import { type Caller, hasAnyRole } from '../../lib/auth/caller.ts';
import type { CallerVerifier } from '../../lib/auth/jwt.ts';
import type { ServedHosts } from '../../lib/http/served-hosts.ts';
import type { Logger } from '../../lib/logger.ts';
import type { CheckoutApiKeys } from '../../subgraphs/procurement/api-keys/store.ts';
import { governingPolicy, linkableIdentities } from '../../subgraphs/procurement/identity-linking/links.ts';
import { parseScope, UCP_SCOPES } from '../../subgraphs/procurement/identity-linking/scopes.ts';
import type { IdentityLinking } from '../../subgraphs/procurement/identity-linking/service.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import { originGuard } from '../operator/guard.ts';
import { CONSENT_SCRIPT, consentPage } from './consent-page.ts';
import { CONSENT_PREFIX } from './provider.ts';

/** The buyer administrator's role: the one that issues the buyer's checkout API keys. */
export const LINK_ROLE = 'agents:admin';
export const CONSENT_SCRIPT_PATH = '/console/link-consent.js';

export interface ConsentDeps {
  readonly provider: Provider;
  readonly resource: string;
  readonly verifier: CallerVerifier;
  readonly keys: Pick<CheckoutApiKeys, 'list'>;
  /** The spend policies, to show each identity's budget and approval threshold. */
  readonly spend: Pick<SpendLedger, 'listPolicies'>;
  readonly linking: IdentityLinking;
  readonly served: ServedHosts;
  readonly clock: { now(): number };
  readonly log: Logger;
}

const BEARER = /^Bearer ([A-Za-z0-9\-_.~+/]+=*)$/;
const json = (reply: FastifyReply, status: number, body: unknown) =>
  reply.code(status).header('cache-control', 'no-store').type('application/json').send(JSON.stringify(body));

/**
 * The consent step (identity-linking.md, "Consent Presentation"): the authorization request
 * lands on GET /console/link/<uid>, a page of the console; its script (same origin, no inline
 * script under the console's CSP) calls GET …/<uid>/details and POST …/<uid> with the operator's
 * bearer token (the console's sign-in: sessionStorage, or pasted on the page). The interaction
 * cookie oidc-provider set is scoped to /console/link/<uid>, so only these routes see it.
 */
export function registerConsent(app: FastifyInstance, d: ConsentDeps): void {
  app.get(CONSENT_SCRIPT_PATH, async (_req, reply) =>
    reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(CONSENT_SCRIPT),
  );
  app.get(`${CONSENT_PREFIX}/:uid`, async (_req, reply) =>
    reply
      .header('cache-control', 'no-store')
      .header('content-security-policy', PAGE_CSP)
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(consentPage(CONSENT_SCRIPT_PATH)),
  );
  app.get<{ Params: { uid: string } }>(`${CONSENT_PREFIX}/:uid/details`, async (req, reply) => {
    if (!(await operator(d, req, reply))) return reply;
    const i = await interaction(d, req, reply);
    if (!i) return reply;
    const client = await d.provider.Client.find(String(i.params.client_id));
    const scopes = requestedScopes(i);
    return json(reply, 200, {
      client: { id: client?.clientId, name: client?.clientName ?? client?.clientId },
      scopes: UCP_SCOPES.filter((s) => scopes.includes(s.scope)).map((s) => ({
        scope: s.scope,
        description: s.description,
      })),
      identities: await identitiesWithPolicies(d),
    });
  });
  app.post<{ Params: { uid: string }; Body: unknown }>(
    `${CONSENT_PREFIX}/:uid`,
    { onRequest: [originGuard(d.served)], bodyLimit: 4096 },
    async (req, reply) => decide(d, req, reply),
  );
}

const PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** The operator behind the call, with the linking role; else the 401/403 is sent and undefined returned. */
async function operator(
  d: ConsentDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<Caller | undefined> {
  const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
  const caller = token ? await d.verifier.verify(token).catch(() => undefined) : undefined;
  if (!caller) {
    json(reply, 401, {
      error: 'login_required',
      error_description: `Sign in with a token holding ${LINK_ROLE}.`,
    });
    return undefined;
  }
  if (!hasAnyRole(caller, [LINK_ROLE]) || !caller.subject) {
    json(reply, 403, {
      error: 'access_denied',
      error_description: `Linking a platform needs the ${LINK_ROLE} role.`,
    });
    return undefined;
  }
  return caller;
}

/** The interaction this browser is in; another uid or none (expired, no cookie): 404 sent, undefined. */
async function interaction(
  d: ConsentDeps,
  req: FastifyRequest<{ Params: { uid: string } }>,
  reply: FastifyReply,
) {
  const found = await d.provider.interactionDetails(req.raw, reply.raw).catch(() => undefined);
  if (!found || found.uid !== req.params.uid) {
    json(reply, 404, {
      error: 'invalid_request',
      error_description: 'No such sign-in in progress: start again from the platform.',
    });
    return undefined;
  }
  return found;
}

/** The identities to choose from, each with the spend policy that will govern the platform's orders. */
async function identitiesWithPolicies(d: ConsentDeps) {
  const policies = await d.spend.listPolicies();
  return linkableIdentities(await d.keys.list()).map((x) => {
    const p = governingPolicy(x.spiffeId, policies);
    return {
      ...x,
      spendPolicy: p && {
        period: p.period,
        budgetCents: p.budgetCents,
        maxPerOrderCents: p.maxPerOrderCents ?? null,
        approvalAboveCents: p.approvalAboveCents ?? null,
      },
    };
  });
}

const requestedScopes = (i: { params: Record<string, unknown> }) => parseScope(String(i.params.scope ?? ''));

/**
 * The decision: a refusal ends the authorization with access_denied; a grant of the requested
 * UCP scopes to one of the buyer's identities is saved as the grant and its link (which identity
 * it acts as), and the authorization resumes with login and consent done.
 */
async function decide(
  d: ConsentDeps,
  req: FastifyRequest<{ Params: { uid: string }; Body: unknown }>,
  reply: FastifyReply,
) {
  const caller = await operator(d, req, reply);
  if (!caller?.subject) return reply;
  const i = await interaction(d, req, reply);
  if (!i) return reply;
  const body = (req.body ?? {}) as { grant?: unknown; spiffeId?: unknown };
  if (body.grant === false) {
    const redirectTo = await d.provider.interactionResult(req.raw, reply.raw, {
      error: 'access_denied',
      error_description: 'The buyer refused to link the platform.',
    });
    return json(reply, 200, { redirectTo });
  }
  const identity = linkableIdentities(await d.keys.list()).find((x) => x.spiffeId === body.spiffeId);
  if (body.grant !== true || !identity)
    return json(reply, 400, {
      error: 'invalid_request',
      error_description: 'Send {"grant": true, "spiffeId": <one of the identities>} or {"grant": false}.',
    });
  const clientId = String(i.params.client_id);
  const client = await d.provider.Client.find(clientId);
  const scopes = requestedScopes(i);
  const grant = new d.provider.Grant({ accountId: caller.subject, clientId });
  if (scopes.length > 0) grant.addResourceScope(d.resource, scopes.join(' '));
  const grantId = await grant.save();
  await d.linking.links.create({
    grantId,
    clientId,
    clientName: client?.clientName ?? clientId,
    accountId: caller.subject,
    identity,
    scopes,
    createdAt: d.clock.now(),
    revokedAt: null,
    revokedBy: null,
  });
  d.log.info({ grantId, clientId, spiffeId: identity.spiffeId, by: caller.subject }, 'platform linked');
  const redirectTo = await d.provider.interactionResult(req.raw, reply.raw, {
    login: { accountId: caller.subject },
    consent: { grantId },
  });
  return json(reply, 200, { redirectTo });
}
