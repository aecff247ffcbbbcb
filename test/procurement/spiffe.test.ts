import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isPathAtOrBelow,
  isProcurementAgent,
  isProcurementAgentId,
  parseSpiffeId,
  SPIFFE_ID_MAX_BYTES,
} from '../../lib/auth/spiffe.ts';

const domains = ['example.org', 'prod.acme-corp.io'];
const agent = 'spiffe://example.org/ns/ai/sa/procurement-agent';

describe('parseSpiffeId', () => {
  it.each([
    ['spiffe://example.org', 'example.org', ''],
    [agent, 'example.org', '/ns/ai/sa/procurement-agent'],
    ['spiffe://a-b.c_d.9/x/Y.z/_-', 'a-b.c_d.9', '/x/Y.z/_-'],
  ])('accepts %s', (id, trustDomain, path) => {
    const r = parseSpiffeId(id);
    expect(r.ok).toBe(true);
    if (r.ok)
      expect({ td: r.value.trustDomain, path: r.value.path, id: r.value.id }).toEqual({
        td: trustDomain,
        path,
        id,
      });
  });

  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    [42, 'missing'],
    ['https://example.org/ns/ai/sa/procurement-agent', 'scheme'],
    ['SPIFFE://example.org/ns/ai/sa/procurement-agent', 'scheme'],
    ['spiffe:/example.org/ns/ai', 'scheme'],
    ['spiffe:///ns/ai/sa/procurement-agent', 'trust-domain'],
    ['spiffe://Example.org/ns/ai/sa/procurement-agent', 'trust-domain'],
    ['spiffe://example.org:443/ns/ai/sa/procurement-agent', 'trust-domain'],
    ['spiffe://user@example.org/ns/ai/sa/procurement-agent', 'trust-domain'],
    [`${agent}?x=1`, 'query-or-fragment'],
    [`${agent}#frag`, 'query-or-fragment'],
    ['spiffe://example.org/ns//ai', 'empty-segment'],
    [`${agent}/`, 'empty-segment'],
    ['spiffe://example.org/', 'empty-segment'],
    ['spiffe://example.org/ns/ai/sa/x/../procurement-agent', 'dot-segment'],
    ['spiffe://example.org/ns/./ai', 'dot-segment'],
    ['spiffe://example.org/ns/ai/sa/procurement%2Dagent', 'segment-characters'],
    ['spiffe://example.org/ns/ai/sa/procurement agent', 'segment-characters'],
    ['spiffe://example.org/ns/ai/sa/procurement-agent\n', 'segment-characters'],
    ['spiffe://example.org/ns/ai/sa/prоcurement-agent', 'segment-characters'], // Cyrillic о
    [`spiffe://example.org/${'a'.repeat(SPIFFE_ID_MAX_BYTES)}`, 'too-long'],
  ])('refuses %j (%s)', (value, error) => {
    const r = parseSpiffeId(value);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toBe(error);
  });

  it('counts the 2048-byte limit in bytes, not characters', () => {
    const base = 'spiffe://example.org/';
    const exact = base + 'a'.repeat(SPIFFE_ID_MAX_BYTES - base.length);
    expect(parseSpiffeId(exact).ok).toBe(true);
    expect(parseSpiffeId(`${exact}a`).ok).toBe(false);
  });

  it('never throws and returns only canonical IDs (fuzzed)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl(),
          fc.string().map((tail) => agent + tail),
        ),
        (s) => {
          const r = parseSpiffeId(s);
          if (r.ok) {
            expect(r.value.id).toBe(s);
            expect(`spiffe://${r.value.trustDomain}${r.value.path}`).toBe(s);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('isProcurementAgent', () => {
  it.each([
    [agent, true],
    [`${agent}/eu-west-1`, true],
    ['spiffe://prod.acme-corp.io/ns/ai/sa/procurement-agent', true],
    ['spiffe://evil.org/ns/ai/sa/procurement-agent', false],
    [`${agent}-evil`, false],
    [`${agent}evil`, false],
    ['spiffe://example.org/ns/ai/sa/procurement', false],
    ['spiffe://example.org/ns/ai/sa', false],
    ['spiffe://example.org/ns/AI/sa/procurement-agent', false],
    ['spiffe://example.org/x/ns/ai/sa/procurement-agent', false],
  ])('%s → %s', (id, expected) => {
    expect(isProcurementAgentId(id, domains)).toBe(expected);
    const r = parseSpiffeId(id);
    expect(r.ok && isProcurementAgent(r.value, domains)).toBe(expected);
  });

  it('checks path prefixes on segment boundaries only', () => {
    expect(isPathAtOrBelow('/a/bc', '/a/b')).toBe(false);
    expect(isPathAtOrBelow('/a/b/c', '/a/b')).toBe(true);
    expect(isPathAtOrBelow('/a/b', '/a/b')).toBe(true);
  });
});
