import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isProcurementAgent, parseSpiffeId, type SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { ServedHosts } from '../../../lib/http/served-hosts.ts';
import type { ExpectedDigest } from '../../../lib/http-signature/digest.ts';
import type { Logger } from '../../../lib/logger.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { unverifiedIdentity } from '../problems.ts';
import { freshState, type IdentitySource } from '../state.ts';
import { inProcessSource, isInProcessAgentCall } from './in-process.ts';
import {
  carriesSignature,
  type SignatureFailure,
  type SignatureOptions,
  type SignedMessage,
  verifySignature,
} from './signature/verify.ts';
import { uriSans } from './uri-sans.ts';

export interface IdentityOptions {
  readonly trustDomains: readonly string[];
  /** Peers whose X-Spiffe-Id is believed when TLS is off (the mTLS-terminating sidecar). */
  readonly trustedProxies: readonly string[];
  /**
   * The Host names a peer-trusted X-Spiffe-Id is believed for (lib/http/served-hosts.ts): a web
   * page that re-points its name to loopback (DNS rebinding) reaches the server from a trusted
   * peer, but with its own name in Host.
   */
  readonly servedHosts: Pick<ServedHosts, 'host'>;
  /** The server terminates mutual TLS itself: the identity is the client certificate's. */
  readonly tls: boolean;
  /**
   * RFC 9421 signatures (Web Bot Auth profile): the second way in for agents outside the mesh.
   * Absent: no key is registered, and a signed request is refused (never ignored).
   */
  readonly signatures?: SignatureOptions;
  readonly log: Logger;
}

type Verdict = { ok: true; id: SpiffeId } | { ok: false; reason: string };

const fail = (reason: string): Verdict => ({ ok: false, reason });

function fromValue(value: string, trustDomains: readonly string[], what: string): Verdict {
  const parsed = parseSpiffeId(value);
  if (!parsed.ok) return fail(`${what} is not a valid SPIFFE ID (${parsed.reason})`);
  if (!isProcurementAgent(parsed.value, trustDomains))
    return fail(`${what} is not the procurement agent in a trusted domain`);
  return { ok: true, id: parsed.value };
}

/** Verdicts by header value, per trust-domain configuration (several gateways may share a process). */
const verdictCaches = new WeakMap<readonly string[], Map<string, Verdict>>();

/** The client certificate's identity, once per TLS connection (not once per request). */
const byConnection = new WeakMap<TLSSocket, Verdict>();

function fromCertificate(socket: TLSSocket, trustDomains: readonly string[]): Verdict {
  const known = byConnection.get(socket);
  if (known) return known;
  let verdict: Verdict;
  const cert = socket.authorized ? socket.getPeerX509Certificate() : undefined;
  if (!cert) verdict = fail('no client certificate from a trusted CA');
  else {
    let uris: string[];
    try {
      uris = uriSans(cert);
    } catch {
      uris = [];
    }
    verdict =
      uris.length === 1
        ? fromValue(uris[0] as string, trustDomains, 'the client certificate URI SAN')
        : fail(`the client certificate has ${uris.length} URI SANs (an X.509-SVID has exactly one)`);
  }
  byConnection.set(socket, verdict);
  return verdict;
}

export function verifyIdentity(req: FastifyRequest, o: IdentityOptions): Verdict {
  const header = req.headers['x-spiffe-id'];
  if (header !== undefined && typeof header !== 'string') return fail('X-Spiffe-Id sent more than once');
  // A call the MCP server runs through this route (in-process.ts): its outer request already
  // proved this identity by certificate or trusted proxy; the ID is still checked as any other.
  if (isInProcessAgentCall(req.raw))
    return header ? fromValue(header, o.trustDomains, 'X-Spiffe-Id') : fail('X-Spiffe-Id is missing');
  if (o.tls) {
    const fromCert = fromCertificate(req.raw.socket as TLSSocket, o.trustDomains);
    if (fromCert.ok && header !== undefined && header !== fromCert.id.id)
      return fail('X-Spiffe-Id disagrees with the client certificate');
    return fromCert;
  }
  if (header === undefined || header === '') return fail('X-Spiffe-Id is missing');
  if (!o.trustedProxies.includes(req.raw.socket.remoteAddress ?? ''))
    return fail('X-Spiffe-Id came from a peer that is not a trusted proxy');
  if (!o.servedHosts.host(req.headers.host))
    return fail(
      'X-Spiffe-Id is believed from a trusted proxy only for a Host this system serves (a loopback name or address, PUBLIC_BASE_URL, SERVED_HOSTS)',
    );
  let headerVerdicts = verdictCaches.get(o.trustDomains);
  if (!headerVerdicts) {
    headerVerdicts = new Map();
    verdictCaches.set(o.trustDomains, headerVerdicts);
  }
  let v = headerVerdicts.get(header);
  if (!v) {
    v = fromValue(header, o.trustDomains, 'X-Spiffe-Id');
    // Agents send the same few IDs: remember verdicts (bounded; wiped when full).
    if (headerVerdicts.size >= 1000) headerVerdicts.clear();
    headerVerdicts.set(header, v);
  }
  return v;
}

/** Step 1's answer: one verified SPIFFE ID and how it was proven, or why not. */
export type AgentIdentityVerdict =
  | { ok: true; id: SpiffeId; source: IdentitySource; digest: ExpectedDigest | undefined }
  | { ok: false; reason: string; signatureError?: SignatureFailure };

const signatureFail = (code: SignatureFailure, reason: string): AgentIdentityVerdict => ({
  ok: false,
  reason: `HTTP message signature: ${reason}`,
  signatureError: code,
});

const messageOf = (req: FastifyRequest): SignedMessage => ({
  method: req.method,
  target: req.raw.url ?? req.url,
  scheme: (req.raw.socket as TLSSocket).encrypted ? 'https' : 'http',
  headers: req.headers,
});

/**
 * Who is calling, from every source the request carries. Without a signature: the mesh
 * (client certificate, or X-Spiffe-Id from a trusted proxy), as before. With one (Signature or
 * Signature-Input present), the signature must verify, whatever else the request carries (a
 * bad signature is never ignored in favour of another source), and every other source present
 * must name the same SPIFFE ID: a client certificate, and X-Spiffe-Id (from any peer: there
 * it is only a claim to agree with, never a proof). Precedence is thus "all must agree".
 */
export async function verifyAgentIdentity(
  req: FastifyRequest,
  o: IdentityOptions,
): Promise<AgentIdentityVerdict> {
  if (!carriesSignature(req.headers)) {
    const v = verifyIdentity(req, o);
    // An in-process call (MCP) records how its outer request proved the identity.
    const source = inProcessSource(req.raw) ?? (o.tls ? 'mtls' : 'proxy');
    return v.ok ? { ok: true, id: v.id, source, digest: undefined } : v;
  }
  const header = req.headers['x-spiffe-id'];
  if (header !== undefined && typeof header !== 'string')
    return { ok: false, reason: 'X-Spiffe-Id sent more than once' };
  if (!o.signatures) return signatureFail('unknown-key', 'no signature keys are registered');
  const s = await verifySignature(messageOf(req), o.signatures);
  if (!s.ok) return signatureFail(s.code, s.reason);
  const signed = fromValue(s.spiffeId, o.trustDomains, "the signing key's SPIFFE ID");
  if (!signed.ok) return signatureFail('identity-mismatch', signed.reason);

  let source: IdentitySource = 'signature';
  const socket = req.raw.socket as TLSSocket;
  if (o.tls && socket.authorized && socket.getPeerX509Certificate()) {
    const cert = fromCertificate(socket, o.trustDomains);
    if (!cert.ok) return { ok: false, reason: cert.reason };
    if (cert.id.id !== signed.id.id)
      return signatureFail(
        'identity-mismatch',
        'the client certificate names another SPIFFE ID than the signing key',
      );
    source = 'mtls+signature';
  }
  if (header !== undefined && header !== signed.id.id)
    return signatureFail('identity-mismatch', 'X-Spiffe-Id names another SPIFFE ID than the signing key');
  if (header !== undefined && !o.tls && o.trustedProxies.includes(req.raw.socket.remoteAddress ?? ''))
    source = 'proxy+signature';
  return { ok: true, id: signed.id, source, digest: s.digest };
}

/** Step 1 (onRequest): who is calling. 401 unless it is the procurement agent, verified. */
export function identityStep(o: IdentityOptions) {
  return async function identity(req: FastifyRequest, reply: FastifyReply) {
    req.agent = freshState();
    const v = await verifyAgentIdentity(req, o);
    if (v.ok) {
      req.agent.identity = v.id;
      req.agent.identitySource = v.source;
      if (v.digest) req.agent.signedDigest = { expected: v.digest, checked: false };
      return;
    }
    req.agent.reason = `identity: ${v.reason}`;
    o.log.warn({ traceId: req.traceId, reason: v.reason }, 'agent identity not verified');
    return sendProblem(reply, unverifiedIdentity(v.reason, v.signatureError), req.url);
  };
}
