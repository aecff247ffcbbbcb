/**
 * SPIFFE IDs (https://github.com/spiffe/spiffe/blob/main/standards/SPIFFE-ID.md), parsed
 * strictly and without URL libraries: WHATWG URL parsing normalises `..`, percent-escapes and
 * case, which would let a crafted header turn into a trusted identity.
 *
 *   spiffe://<trust-domain>/<segment>/<segment>…
 *   trust domain: [a-z0-9._-]+ (lowercase only, no port, no userinfo)
 *   segment:      [A-Za-z0-9._-]+, never empty, `.` or `..`
 *   no query, no fragment, at most 2048 bytes in all.
 *
 * Stable API (other areas import it): parseSpiffeId, isProcurementAgent, PROCUREMENT_AGENT_PATH.
 */

export interface SpiffeId {
  /** The whole ID, exactly as given (it is already canonical when it parses). */
  readonly id: string;
  readonly trustDomain: string;
  /** `/ns/ai/sa/procurement-agent`; empty for the trust domain's own ID. */
  readonly path: string;
  readonly segments: readonly string[];
}

export type SpiffeIdError =
  | 'missing'
  | 'too-long'
  | 'scheme'
  | 'trust-domain'
  | 'query-or-fragment'
  | 'empty-segment'
  | 'dot-segment'
  | 'segment-characters';

export type SpiffeIdResult =
  | { readonly ok: true; readonly value: SpiffeId }
  | { readonly ok: false; readonly error: SpiffeIdError; readonly reason: string };

export const SPIFFE_ID_MAX_BYTES = 2048;
/** The procurement agent's workload path in its trust domain (spec, "Authentication"). */
export const PROCUREMENT_AGENT_PATH = '/ns/ai/sa/procurement-agent';

const SCHEME = 'spiffe://';
const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

const fail = (error: SpiffeIdError, reason: string): SpiffeIdResult => ({ ok: false, error, reason });

/** Parses a SPIFFE ID; never throws. `reason` is safe to log (it does not echo the input). */
export function parseSpiffeId(value: unknown): SpiffeIdResult {
  if (typeof value !== 'string' || value.length === 0) return fail('missing', 'no SPIFFE ID given');
  // Length in bytes, as the standard counts; a cheap pre-check first.
  if (value.length > SPIFFE_ID_MAX_BYTES || Buffer.byteLength(value, 'utf8') > SPIFFE_ID_MAX_BYTES)
    return fail('too-long', `SPIFFE ID longer than ${SPIFFE_ID_MAX_BYTES} bytes`);
  if (!value.startsWith(SCHEME)) return fail('scheme', 'scheme is not spiffe://');
  if (value.includes('?') || value.includes('#'))
    return fail('query-or-fragment', 'SPIFFE ID has a query or fragment');
  const rest = value.slice(SCHEME.length);
  const slash = rest.indexOf('/');
  const trustDomain = slash === -1 ? rest : rest.slice(0, slash);
  if (!TRUST_DOMAIN.test(trustDomain))
    return fail('trust-domain', 'trust domain is empty or has characters outside [a-z0-9._-]');
  if (slash === -1)
    return { ok: true, value: Object.freeze({ id: value, trustDomain, path: '', segments: [] }) };
  const path = rest.slice(slash);
  const segments = path.slice(1).split('/');
  for (const s of segments) {
    if (s.length === 0) return fail('empty-segment', 'path has an empty segment');
    if (s === '.' || s === '..') return fail('dot-segment', 'path has a "." or ".." segment');
    if (!SEGMENT.test(s))
      return fail('segment-characters', 'path segment has characters outside [A-Za-z0-9._-]');
  }
  return {
    ok: true,
    value: Object.freeze({ id: value, trustDomain, path, segments: Object.freeze(segments) }),
  };
}

/**
 * True when `path` is `base` or lies below it on a segment boundary: `…/procurement-agent`
 * and `…/procurement-agent/eu-1`, never `…/procurement-agent-evil` (what startsWith allows).
 */
export function isPathAtOrBelow(path: string, base: string): boolean {
  return path === base || (path.startsWith(base) && path.charCodeAt(base.length) === 47) /* / */;
}

/** Is this parsed ID the procurement agent (or one of its sub-identities) in a trusted domain? */
export function isProcurementAgent(id: SpiffeId, trustDomains: readonly string[]): boolean {
  return trustDomains.includes(id.trustDomain) && isPathAtOrBelow(id.path, PROCUREMENT_AGENT_PATH);
}

/** Convenience for callers holding a raw header value. */
export function isProcurementAgentId(value: unknown, trustDomains: readonly string[]): boolean {
  const r = parseSpiffeId(value);
  return r.ok && isProcurementAgent(r.value, trustDomains);
}
