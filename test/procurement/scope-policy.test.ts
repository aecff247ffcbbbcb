import { describe, expect, it } from 'vitest';
import {
  CATALOG_READ_SCOPE,
  ORDER_CANCEL_SCOPE,
  ORDER_CREATE_SCOPE,
  ORDER_READ_SCOPE,
  ScopePolicyError,
  SPEND_READ_SCOPE,
  scopePolicy,
} from '../../gateway/agent/scope/policy.ts';
import { parseSpiffeId, type SpiffeId } from '../../lib/auth/spiffe.ts';

const id = (s: string): SpiffeId => {
  const r = parseSpiffeId(s);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';

describe('scope policy', () => {
  it('grants orders:create to the procurement agent and its sub-identities in every trusted domain by default', () => {
    const p = scopePolicy(undefined, ['example.org', 'prod.acme.io']);
    expect(p.grants(id(AGENT)).has(ORDER_CREATE_SCOPE)).toBe(true);
    expect(p.grants(id(`${AGENT}/eu-1`)).has(ORDER_CREATE_SCOPE)).toBe(true);
    expect(p.grants(id('spiffe://prod.acme.io/ns/ai/sa/procurement-agent')).has(ORDER_CREATE_SCOPE)).toBe(
      true,
    );
    expect(p.grants(id(`${AGENT}/eu-1`)).has(SPEND_READ_SCOPE)).toBe(true);
    expect(p.grants(id(`${AGENT}-evil`)).size).toBe(0);
    expect(p.grants(id('spiffe://other.org/ns/ai/sa/procurement-agent')).size).toBe(0);
  });

  it('grants reading and cancelling its own orders, reading its spend policy (issue 12) and searching the catalog (issue 47) by default too, and nothing more', () => {
    const p = scopePolicy(undefined, ['example.org']);
    expect([...p.grants(id(`${AGENT}/eu-1`))].sort()).toEqual(
      [CATALOG_READ_SCOPE, ORDER_CANCEL_SCOPE, ORDER_CREATE_SCOPE, ORDER_READ_SCOPE, SPEND_READ_SCOPE].sort(),
    );
    expect(CATALOG_READ_SCOPE).toBe('catalog:read');
    expect([ORDER_READ_SCOPE, ORDER_CANCEL_SCOPE]).toEqual(['orders:read', 'orders:cancel']);
  });

  it('lets the most specific entry win', () => {
    const p = scopePolicy(JSON.stringify({ [AGENT]: ['orders:create', 'x'], [`${AGENT}/ro`]: ['x'] }), [
      'example.org',
    ]);
    expect([...p.grants(id(`${AGENT}/ro/1`))]).toEqual(['x']);
    expect(p.grants(id(`${AGENT}/rw`)).has(ORDER_CREATE_SCOPE)).toBe(true);
  });

  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['a key that is not a SPIFFE ID', '{"agent":["orders:create"]}'],
    ['scopes that are not strings', `{"${AGENT}":[1]}`],
  ])('refuses %s, naming AGENT_SCOPE_POLICY', (_name, doc) => {
    expect(() => scopePolicy(doc, ['example.org'])).toThrow(ScopePolicyError);
    expect(() => scopePolicy(doc, ['example.org'])).toThrow(/AGENT_SCOPE_POLICY/);
  });
});
