import { DEFAULT_AGENT_SCOPES } from '../../../lib/auth/agent-scopes.ts';
import {
  isPathAtOrBelow,
  PROCUREMENT_AGENT_PATH,
  parseSpiffeId,
  type SpiffeId,
} from '../../../lib/auth/spiffe.ts';

// The agent scopes live in lib/ (checkout API keys are issued with a subset of them too).
export {
  CATALOG_READ_SCOPE,
  DEFAULT_AGENT_SCOPES,
  ORDER_CANCEL_SCOPE,
  ORDER_CREATE_SCOPE,
  ORDER_READ_SCOPE,
  SPEND_READ_SCOPE,
} from '../../../lib/auth/agent-scopes.ts';

/**
 * Which scopes each workload holds. An entry for a SPIFFE ID covers that ID and the IDs below
 * it (segment boundary); the most specific entry wins, so a sub-agent can be given less.
 */
export interface ScopePolicy {
  grants(id: SpiffeId): ReadonlySet<string>;
}

interface Entry {
  readonly trustDomain: string;
  readonly path: string;
  readonly scopes: ReadonlySet<string>;
}

export class ScopePolicyError extends Error {
  override name = 'ScopePolicyError';
}

/** Default: create, read and cancel orders and read the spend policy, to the procurement agent in every trusted domain. */
export const defaultPolicyDocument = (trustDomains: readonly string[]): Record<string, string[]> =>
  Object.fromEntries(
    trustDomains.map((td) => [`spiffe://${td}${PROCUREMENT_AGENT_PATH}`, [...DEFAULT_AGENT_SCOPES]]),
  );

/** Builds the policy from AGENT_SCOPE_POLICY (JSON) or the default; a bad document throws. */
export function scopePolicy(document: string | undefined, trustDomains: readonly string[]): ScopePolicy {
  let doc: unknown;
  try {
    doc = document === undefined ? defaultPolicyDocument(trustDomains) : JSON.parse(document);
  } catch {
    throw new ScopePolicyError('AGENT_SCOPE_POLICY: not valid JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ScopePolicyError('AGENT_SCOPE_POLICY: expected an object of SPIFFE ID → array of scopes');
  const entries: Entry[] = [];
  for (const [id, scopes] of Object.entries(doc)) {
    const parsed = parseSpiffeId(id);
    if (!parsed.ok)
      throw new ScopePolicyError(`AGENT_SCOPE_POLICY: ${JSON.stringify(id)} is not a SPIFFE ID`);
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string'))
      throw new ScopePolicyError(`AGENT_SCOPE_POLICY: the scopes of ${id} must be an array of strings`);
    entries.push({ trustDomain: parsed.value.trustDomain, path: parsed.value.path, scopes: new Set(scopes) });
  }
  // Most specific first.
  entries.sort((a, b) => b.path.length - a.path.length);
  const none: ReadonlySet<string> = new Set();
  const memo = new Map<string, ReadonlySet<string>>();
  return {
    grants(id) {
      let g = memo.get(id.id);
      if (g) return g;
      const e = entries.find((x) => x.trustDomain === id.trustDomain && isPathAtOrBelow(id.path, x.path));
      g = e?.scopes ?? none;
      if (memo.size > 10_000) memo.clear();
      memo.set(id.id, g);
      return g;
    },
  };
}
