import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../../lib/auth/context.ts';
import { parseSpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import { MAX_POLICIES, type SpendLedger, TooManyPolicies } from './ledger.ts';
import {
  candidateSubjects,
  parseSpendPolicy,
  periodWindow,
  type SpendPolicy,
  type SpendPolicyInput,
  textOfCents,
} from './policy.ts';

const badInput = (message: string, errors: readonly { pointer: string; message: string }[]) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', errors, http: { status: 422 } } });

const iso = (ms: number) => new Date(ms).toISOString();
const PERIOD_ENUM = { day: 'DAY', month: 'MONTH' } as const;
const MAX_PAGE = 500;

/** A policy as the SDL's SpendPolicy; `currentPeriod` is resolved from the ledger when asked for. */
export const view = (p: SpendPolicy) => ({
  subject: p.subject,
  currency: p.currency,
  period: PERIOD_ENUM[p.period],
  budget: textOfCents(p.budgetCents),
  maxPerOrder: p.maxPerOrderCents === undefined ? null : textOfCents(p.maxPerOrderCents),
  approvalAbove: p.approvalAboveCents === undefined ? null : textOfCents(p.approvalAboveCents),
  secondApprovalAbove:
    p.secondApprovalAboveCents === undefined ? null : textOfCents(p.secondApprovalAboveCents),
  expiresAt: p.expiresAt === undefined ? null : iso(p.expiresAt),
  allowedSkuPrefixes: p.skuPrefixes ?? [],
  updatedAt: iso(p.updatedAt),
});

/** Resolvers of the spend part of schemas/procurement.graphql; roles come from its @requiresRole. */
export function spendResolvers(
  ledger: SpendLedger,
  clock: Clock,
  trustDomains: readonly string[],
): GraphQLResolverMap<RequestContext> {
  const subjectOf = (value: unknown, pointer: string) => {
    const id = parseSpiffeId(value);
    if (!id.ok) throw badInput('not a SPIFFE ID', [{ pointer, message: id.reason }]);
    return id.value;
  };
  return {
    Query: {
      spendPolicy: async (_: unknown, { subject }: { subject: string }) => {
        const p = await ledger.getPolicy(subjectOf(subject, '/subject').id);
        return p ? view(p) : null;
      },
      // Keyset pagination on the subject: each page's currentPeriod costs one ledger read per policy.
      spendPolicies: async (
        _: unknown,
        { after, first }: { after?: string | null; first?: number | null },
      ) => {
        const n = Math.min(MAX_PAGE, Math.max(1, first ?? 100));
        return (await ledger.listPolicies())
          .filter((p) => after == null || p.subject > after)
          .sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0))
          .slice(0, n)
          .map(view);
      },
      effectiveSpendPolicy: async (_: unknown, { spiffeId }: { spiffeId: string }) => {
        const s = await ledger.status(candidateSubjects(subjectOf(spiffeId, '/spiffeId')), clock.now());
        return s ? view(s.policy) : null;
      },
    },
    Mutation: {
      setSpendPolicy: async (_: unknown, { input }: { input: SpendPolicyInput & { period?: unknown } }) => {
        const period = input.period === 'DAY' ? 'day' : input.period === 'MONTH' ? 'month' : input.period;
        const parsed = parseSpendPolicy({ ...input, period }, trustDomains, clock.now());
        if (!parsed.ok) throw badInput('invalid spend policy', parsed.errors);
        try {
          await ledger.putPolicy(parsed.policy);
        } catch (err) {
          if (err instanceof TooManyPolicies)
            throw badInput('too many spend policies', [
              { pointer: '/subject', message: `at most ${MAX_POLICIES} policies; delete one first` },
            ]);
          throw err;
        }
        return view(parsed.policy);
      },
      deleteSpendPolicy: (_: unknown, { subject }: { subject: string }) =>
        ledger.deletePolicy(subjectOf(subject, '/subject').id),
    },
    SpendPolicy: {
      currentPeriod: async (p: ReturnType<typeof view>) => {
        const s = await ledger.status([p.subject], clock.now());
        const now = clock.now();
        const window = s?.window ?? periodWindow(p.period === 'DAY' ? 'day' : 'month', now);
        const spent = s?.spentCents ?? 0;
        const budget = s?.policy.budgetCents ?? 0;
        return {
          start: iso(window.start),
          resetsAt: iso(window.resetsAt),
          spent: textOfCents(spent),
          remaining: textOfCents(Math.max(0, budget - spent)),
        };
      },
    },
  };
}
