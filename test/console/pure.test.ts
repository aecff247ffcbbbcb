/** The console's pure helpers: token claims for display, the effective spend policy, the order search, instants. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimsOf } from '../../console/src/claims.ts';
import { filterOrders, type Order } from '../../console/src/orders-filter.ts';
import { effectivePolicy, type SpendPolicy } from '../../console/src/spend-policy.ts';
import { toDate } from '../../console/src/time.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { testConfig } from '../support/system.ts';

const jwt = (payload: unknown) =>
  `eyJhbGciOiJFUzI1NiJ9.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;

describe('claimsOf (who is signed in, for display)', () => {
  it('reads a token the development key signs: subject, roles, expiry', async () => {
    const token = await mintDevToken(testConfig(), {
      subject: 'alice',
      roles: ['agents:read', 'audit:read'],
    });
    const c = claimsOf(token);
    expect(c?.sub).toBe('alice');
    expect(c?.roles).toEqual(['agents:read', 'audit:read']);
    expect(c?.exp).toBeGreaterThan(Date.now() / 1000);
  });

  it.each([
    ['roles and scope joined, once each', { roles: ['a:b', 'c:d'], scope: 'c:d e:f' }, ['a:b', 'c:d', 'e:f']],
    ['non-string roles ignored', { roles: ['a:b', 3, null] }, ['a:b']],
    ['no roles', { sub: 'x' }, []],
    ['UTF-8 subject', { sub: 'zoë', roles: [] }, []],
  ])('%s', (_name, payload, roles) => {
    expect(claimsOf(jwt(payload))?.roles).toEqual(roles);
  });

  it.each([
    ['empty', ''],
    ['two parts', 'a.b'],
    ['payload not base64url JSON', 'a.!!!.c'],
    ['payload a JSON array', jwt([1, 2])],
    ['payload JSON null', jwt(null)],
    ['four parts', 'a.b.c.d'],
  ])('is null for a text that is not a JWT: %s', (_name, text) => {
    expect(claimsOf(text)).toBeNull();
  });

  it('answers null or well-formed claims, whatever is pasted', () => {
    const wellFormed = (c: ReturnType<typeof claimsOf>) =>
      c === null || (Array.isArray(c.roles) && c.roles.every((r) => typeof r === 'string'));
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 100 }), (a, b) => {
        expect(wellFormed(claimsOf(a))).toBe(true);
        expect(wellFormed(claimsOf(`${a}.${b}.${a}`))).toBe(true);
        expect(wellFormed(claimsOf(`x.${Buffer.from(b).toString('base64url')}.y`))).toBe(true);
      }),
    );
  });

  it('gives back any subject and role list a token carries', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.uniqueArray(fc.string({ minLength: 1 }).filter((s) => !/\s/.test(s))),
        (sub, roles) => {
          const c = claimsOf(jwt({ sub, roles }));
          expect(c?.sub).toBe(sub);
          expect(c?.roles).toEqual(roles);
        },
      ),
    );
  });
});

const policy = (subject: string): SpendPolicy => ({
  subject,
  currency: 'USD',
  period: 'DAY',
  budget: '100.00',
  maxPerOrder: null,
  expiresAt: null,
  currentPeriod: { start: '', resetsAt: '', spent: '0.00', remaining: '100.00' },
});

describe('effectivePolicy (whose budget an agent spends)', () => {
  const A = 'spiffe://example.org/ns/ai/sa/procurement-agent';
  const policies = [policy(A), policy(`${A}/team-1`), policy('spiffe://example.org/ns/other')];
  it.each([
    ['its own policy', `${A}/team-1`, `${A}/team-1`],
    ['the longest prefix', `${A}/team-1/bot-7`, `${A}/team-1`],
    ['a shorter prefix', `${A}/team-2`, A],
    ['exactly the prefix', A, A],
    ['not a sibling path that shares the text', `${A}-evil`, undefined],
    ['not another identity', 'spiffe://example.org/ns/ai/sa/other', undefined],
  ])('%s', (_name, id, subject) => {
    expect(effectivePolicy(id, policies)?.subject).toBe(subject);
  });
});

describe('filterOrders and toDate (the order search)', () => {
  const order = (sku: string, processedAt: number | string): Order => ({
    orderId: `o-${sku}-${processedAt}`,
    status: 'APPROVED',
    agentId: 'agent-0000001',
    spiffeId: 's',
    sku,
    quantity: 1,
    allocatedBudget: 1,
    processedAt,
  });
  const at = (iso: string) => Date.parse(iso) / 1000;
  const orders = [
    order('SKU-ABC-000001', at('2026-11-23T10:00:00Z')),
    order('SKU-ELC-000004', at('2026-11-23T12:00:00Z')),
    order('SKU-ABC-000002', '2026-11-23T14:00:00.000Z'),
  ];
  it.each([
    ['everything without a filter', { sku: '', since: '', until: '' }, 3],
    ['by SKU, case-insensitive, in part', { sku: 'abc', since: '', until: '' }, 2],
    ['from a time', { sku: '', since: '2026-11-23T11:00:00Z', until: '' }, 2],
    ['up to a time', { sku: '', since: '', until: '2026-11-23T12:00:00Z' }, 2],
    [
      'SKU and window together',
      { sku: 'ABC', since: '2026-11-23T11:00:00Z', until: '2026-11-23T15:00:00Z' },
      1,
    ],
  ])('%s', (_name, filter, n) => {
    expect(filterOrders(orders, filter)).toHaveLength(n);
  });

  it('reads the spec’s processed_at seconds, milliseconds and ISO strings as the same instant', () => {
    const iso = '2026-11-23T13:04:33.023Z';
    expect(toDate(Date.parse(iso) / 1000).toISOString()).toBe(iso);
    expect(toDate(Date.parse(iso)).toISOString()).toBe(iso);
    expect(toDate(iso).toISOString()).toBe(iso);
  });
});
