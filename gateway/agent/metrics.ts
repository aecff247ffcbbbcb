import { Counter, Gauge, type Registry } from 'prom-client';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import type { AuditProblemKind, AuditReport } from './audit/verify.ts';
import type { BlockStore } from './block/store.ts';

/**
 * The agent gateway's own events as metrics (docs/slos.md, docs/runbooks.md): blocks started,
 * spend-policy refusals and audit verifications. Each is counted where the event is decided, by
 * wrapping the store or check that decides it, so every edge that uses them (the /v2 chain,
 * ACP, MCP) is counted alike. Labels are closed sets (a refusal's reason, a verification's
 * result); no label names an agent, so the series do not grow with the agents.
 */
export interface AgentMetrics {
  blocks(store: BlockStore): BlockStore;
  spend(ledger: SpendLedger, withoutPolicy: 'allow' | 'deny'): SpendLedger;
  /** A refusal decided outside the ledger (an ACP line's SKU checked against the policy first). */
  spendRefused(reason: SpendRefusalReason): void;
  verify(check: () => Promise<AuditReport>): () => Promise<AuditReport>;
  /** At start: the stored log ends before its signed head (cut while this process was down). */
  truncatedAtStart(truncated: boolean): void;
}

const SPEND_REASONS = ['budget', 'per-order', 'expired', 'sku-not-allowed', 'no-policy'] as const;
export type SpendRefusalReason = (typeof SPEND_REASONS)[number];
const AUDIT_RESULTS: readonly ('ok' | AuditProblemKind)[] = [
  'ok',
  'truncated',
  'head-rolled-back',
  'checkpoint-invalid',
  'checkpoint-mismatch',
  'missing',
  'relinked',
  'altered',
  'unknown-key',
  'unkeyed',
];

export function agentMetrics(registry: Registry): AgentMetrics {
  const blocks = new Counter({
    name: 'agent_blocks_total',
    help: 'Agent identities blocked after repeated contract errors (a block started)',
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'agent_spend_refusals_total',
    help: 'Orders refused by a spend policy, by reason (budget, per-order, expired, sku-not-allowed, no-policy)',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of SPEND_REASONS) refusals.labels(reason).inc(0);
  const verifications = new Counter({
    name: 'audit_verifications_total',
    help: 'Audit log verifications by result (ok, or the kind of the first problem found)',
    labelNames: ['result'],
    registers: [registry],
  });
  for (const result of AUDIT_RESULTS) verifications.labels(result).inc(0);
  const truncated = new Gauge({
    name: 'audit_log_truncated',
    help: '1 when the stored audit log ends before its signed head (seen at start or by a verification)',
    registers: [registry],
  });
  truncated.set(0);

  return {
    blocks: (store) => ({
      get: (identity, now) => store.get(identity, now),
      reset: (identity) => store.reset(identity),
      clear: (identity) => store.clear(identity),
      async recordError(identity, now) {
        const s = await store.recordError(identity, now);
        // The error that starts a block clears the count (the same test as the chain's log line).
        if (s.until > now && s.count === 0) blocks.inc();
        return s;
      },
    }),
    spend: (ledger, withoutPolicy) => ({
      putPolicy: (p) => ledger.putPolicy(p),
      deletePolicy: (subject) => ledger.deletePolicy(subject),
      getPolicy: (subject) => ledger.getPolicy(subject),
      listPolicies: () => ledger.listPolicies(),
      status: (candidates, now) => ledger.status(candidates, now),
      release: (orderId, now) => ledger.release(orderId, now),
      async reserve(r) {
        const result = await ledger.reserve(r);
        if (result.kind === 'refused') refusals.labels(result.reason).inc();
        else if (result.kind === 'no-policy' && withoutPolicy === 'deny') refusals.labels('no-policy').inc();
        return result;
      },
    }),
    spendRefused: (reason) => refusals.labels(reason).inc(),
    verify: (check) => async () => {
      const report = await check();
      verifications.labels(report.ok ? 'ok' : report.kind).inc();
      if (!report.ok && report.kind === 'truncated') truncated.set(1);
      else if (report.ok) truncated.set(0);
      return report;
    },
    truncatedAtStart: (t) => truncated.set(t ? 1 : 0),
  };
}
