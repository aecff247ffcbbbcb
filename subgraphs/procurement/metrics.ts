import { Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { OrderStore, PendingSummary } from './store/store.ts';

/**
 * The approval queue as an operator watches it (docs/slos.md, "Approval decision time"):
 * how many orders wait, how old the oldest is, and how long each decided one waited. No label
 * names an agent or an order, so the series stay a handful whatever the traffic.
 */
export function approvalMetrics(registry: Registry, store: OrderStore, clock: Clock, log: Logger) {
  // The registry collects every metric of a scrape at once: both gauges share one read.
  let reading: ReturnType<OrderStore['pendingSummary']> | undefined;
  const read = () => {
    reading ??= store.pendingSummary().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const gauge = (name: string, help: string, value: (s: PendingSummary) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        try {
          this.set(value(await read()));
        } catch (err) {
          log.warn({ err }, 'pending approvals not read for /metrics');
        }
      },
    });
  gauge('procurement_pending_approvals', 'Orders PENDING_APPROVAL, waiting for an operator', (s) => s.count);
  gauge(
    'procurement_pending_approval_oldest_age_seconds',
    'How long the oldest order PENDING_APPROVAL has waited (0 when none waits)',
    (s) => (s.oldestProcessedAt === null ? 0 : Math.max(0, clock.now() / 1000 - s.oldestProcessedAt)),
  );
  const decisions = new Histogram({
    name: 'procurement_approval_decision_seconds',
    help: 'How long an order waited from PENDING_APPROVAL to its decision, by decision (approved, rejected, expired)',
    labelNames: ['decision'],
    // Minutes to the default 24 h expiry: the SLO's bound (4 h) is one of them.
    buckets: [60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400, 172800],
    registers: [registry],
  });
  for (const decision of ['approved', 'rejected', 'expired']) decisions.zero({ decision });
  return {
    decided(status: 'APPROVED' | 'REJECTED' | 'EXPIRED', waitedSeconds: number): void {
      decisions.labels(status.toLowerCase()).observe(Math.max(0, waitedSeconds));
    },
  };
}
