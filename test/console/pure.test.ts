/** The console's pure helpers: token claims for display, the effective spend policy, the order search, instants. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Decision,
  linkedOrder,
  linkedOrderSentence,
  newestDecisions,
  type Pending,
} from '../../console/src/approvals.ts';
import { claimsOf } from '../../console/src/claims.ts';
import {
  EMPTY_SEARCH,
  PAGE_SIZE,
  SEARCH,
  searchVariables,
  unixSeconds,
} from '../../console/src/orders-search.ts';
import {
  EMPTY_POLICY,
  effectivePolicy,
  errorsByField,
  formOf,
  policyInput,
  type SpendPolicy,
} from '../../console/src/spend-policy.ts';
import { toDate } from '../../console/src/time.ts';
import { testConfig } from '../../harness/system.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';

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

describe('searchVariables, unixSeconds and toDate (the order search)', () => {
  const none = {
    agentId: null,
    spiffeId: null,
    sku: null,
    status: null,
    placedFrom: null,
    placedBefore: null,
    after: null,
    limit: PAGE_SIZE,
  };
  const local = (d: Date) => {
    const p = (n: number) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
  };
  const t = new Date(2026, 10, 23, 11, 30);
  it.each([
    ['no filter: every field null', EMPTY_SEARCH, null, none],
    [
      'text fields trimmed; blank is no filter',
      { ...EMPTY_SEARCH, agentId: ' agent-1 ', spiffeId: '  ' },
      null,
      { ...none, agentId: 'agent-1' },
    ],
    [
      'the SKU as typed (the API matches exactly)',
      { ...EMPTY_SEARCH, sku: 'SKU-abc-1' },
      null,
      { ...none, sku: 'SKU-abc-1' },
    ],
    ['a status', { ...EMPTY_SEARCH, status: 'CANCELLED' as const }, null, { ...none, status: 'CANCELLED' }],
    [
      'a window in Unix seconds, from the browser zone',
      { ...EMPTY_SEARCH, from: local(t), before: local(new Date(t.getTime() + 3_600_000)) },
      null,
      { ...none, placedFrom: t.getTime() / 1000, placedBefore: t.getTime() / 1000 + 3600 },
    ],
    ['a time that is not one is no filter', { ...EMPTY_SEARCH, from: 'yesterday' }, null, none],
    ['the next page’s cursor', EMPTY_SEARCH, 'b3JkZXI', { ...none, after: 'b3JkZXI' }],
  ])('%s', (_name, form, after, vars) => {
    expect(searchVariables(form, after)).toEqual(vars);
  });

  it('reads any minute the datetime-local field can hold as that minute’s Unix seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), (s) => {
        const minute = new Date(s * 1000);
        minute.setSeconds(0, 0);
        expect(unixSeconds(local(minute))).toBe(minute.getTime() / 1000);
      }),
    );
  });

  it('sends the persisted PurchaseOrderSearch as the manifest prints it (so the safelist lets it run)', () => {
    expect(SEARCH).toMatch(/^query PurchaseOrderSearch\(/);
    expect(SEARCH).toContain('cursor');
  });

  it('reads the spec’s processed_at seconds, milliseconds and ISO strings as the same instant', () => {
    const iso = '2026-11-23T13:04:33.023Z';
    expect(toDate(Date.parse(iso) / 1000).toISOString()).toBe(iso);
    expect(toDate(Date.parse(iso)).toISOString()).toBe(iso);
    expect(toDate(iso).toISOString()).toBe(iso);
  });
});

describe('spend policy form (the Spend policies page)', () => {
  it('sends what was typed, trimmed, leaving out empty optional fields', () => {
    expect(
      policyInput({
        ...EMPTY_POLICY,
        subject: ' spiffe://example.org/ns/ai/sa/x ',
        budget: '12.345',
        approvalAbove: ' 50 ',
        allowedSkuPrefixes: 'SKU-ELC-, SKU-TOL-  ',
      }),
    ).toEqual({
      subject: 'spiffe://example.org/ns/ai/sa/x',
      currency: 'USD',
      period: 'DAY',
      budget: '12.345',
      approvalAbove: '50',
      allowedSkuPrefixes: ['SKU-ELC-', 'SKU-TOL-'],
    });
  });

  it('round-trips a stored policy through the form', () => {
    const stored = {
      subject: 'spiffe://example.org/ns/ai',
      currency: 'USD',
      period: 'MONTH',
      budget: '2000.00',
      maxPerOrder: null,
      approvalAbove: '100.00',
      secondApprovalAbove: '1000.00',
      expiresAt: null,
      allowedSkuPrefixes: ['SKU-ELC-'],
      currentPeriod: { start: '', resetsAt: '', spent: '0.00', remaining: '2000.00' },
    };
    expect(policyInput(formOf(stored))).toEqual({
      subject: stored.subject,
      currency: 'USD',
      period: 'MONTH',
      budget: '2000.00',
      approvalAbove: '100.00',
      secondApprovalAbove: '1000.00',
      allowedSkuPrefixes: ['SKU-ELC-'],
    });
  });

  it.each([
    [[{ pointer: '/budget', message: 'bad' }], { budget: ['bad'] }],
    [
      [
        { pointer: '/allowedSkuPrefixes/2', message: 'too long' },
        { pointer: '/allowedSkuPrefixes/0', message: 'empty' },
      ],
      { allowedSkuPrefixes: ['#3: too long', '#1: empty'] },
    ],
    [[{ pointer: '', message: 'whole input' }], { input: ['whole input'] }],
  ])('puts the API violations %j on their fields', (errors, expected) => {
    expect(errorsByField(errors)).toEqual(expected);
  });
});

describe('newestDecisions (the Approvals page)', () => {
  const decision = (
    orderId: string,
    status: Decision['status'],
    decidedAt: number | null,
    approvalsRequired = 1,
  ) =>
    ({
      orderId,
      status,
      agentId: 'a',
      sku: 'SKU-ABC-000001',
      quantity: 1,
      allocatedBudgetDecimal: '1.00',
      approvalsRequired,
      approvals: [],
      decidedAt,
      decidedBy: 'op',
      decisionReason: null,
    }) satisfies Decision;

  it('leaves out orders approved on creation, orders by decision time, keeps n', () => {
    const got = newestDecisions(
      {
        approved: [
          decision('auto', 'APPROVED', null, 0),
          decision('a1', 'APPROVED', 30),
          decision('a2', 'APPROVED', 10),
        ],
        rejected: [decision('r1', 'REJECTED', 20)],
        expired: [decision('e1', 'EXPIRED', 40)],
      },
      3,
    );
    expect(got.map((d) => d.orderId)).toEqual(['e1', 'a1', 'r1']);
  });

  it('never returns more than n, and always newest first (property)', () => {
    const d = fc.record({
      id: fc.uuid(),
      at: fc.option(fc.integer({ min: 0, max: 1e9 }), { nil: null }),
      req: fc.integer({ min: 0, max: 2 }),
    });
    fc.assert(
      fc.property(fc.array(d), fc.array(d), fc.integer({ min: 0, max: 10 }), (a, r, n) => {
        const got = newestDecisions(
          {
            approved: a.map((x) => decision(x.id, 'APPROVED', x.at, x.req)),
            rejected: r.map((x) => decision(x.id, 'REJECTED', x.at)),
            expired: [],
          },
          n,
        );
        expect(got.length).toBeLessThanOrEqual(n);
        for (let i = 1; i < got.length; i++)
          expect(got[i - 1]?.decidedAt ?? 0).toBeGreaterThanOrEqual(got[i]?.decidedAt ?? 0);
        expect(
          got.every((g) => g.decidedAt !== null && (g.status !== 'APPROVED' || g.approvalsRequired > 0)),
        ).toBe(true);
      }),
    );
  });
});

describe('the order an approval link names (?order=, a UCP continue_url)', () => {
  const ID = 'ord_0123456789abcdef0123456789abcdef';
  const queued = [{ order: { orderId: ID } }] as unknown as Pending[];
  it('is waiting when its card is in the queue, whatever a lookup says', () => {
    expect(linkedOrder(ID, queued, undefined)).toEqual({ kind: 'waiting' });
    expect(linkedOrderSentence(ID, { kind: 'waiting' })).toBe(
      `Order ${ID} waits for a decision: its card is marked below.`,
    );
  });
  it('is unknown until the lookup answers, then decided or not found', () => {
    expect(linkedOrder(ID, [], undefined)).toBeUndefined();
    expect(linkedOrder(ID, [], null)).toEqual({ kind: 'not-found' });
    expect(linkedOrder(ID, [], { status: 'APPROVED' })).toEqual({ kind: 'decided', status: 'APPROVED' });
  });
  it.each([
    ['APPROVED', 'it is already approved.'],
    ['REJECTED', 'it is already rejected.'],
    ['EXPIRED', 'it is already expired (no decision in time).'],
    ['CANCELLED', 'it is already cancelled.'],
  ])('says plainly that a %s order waits for no decision', (status, tail) => {
    expect(linkedOrderSentence(ID, { kind: 'decided', status })).toBe(
      `Order ${ID} waits for no decision: ${tail}`,
    );
  });
  it('says when it is not found, and when it waits beyond the first page of the queue', () => {
    expect(linkedOrderSentence(ID, { kind: 'not-found' })).toBe(`Order ${ID} was not found.`);
    expect(linkedOrderSentence(ID, { kind: 'decided', status: 'PENDING_APPROVAL' })).toMatch(
      /is waiting for approval, beyond the first 100 orders of the queue\.$/,
    );
  });
});
