/**
 * The Prometheus recording and alerting rules (docs/slos.md, docs/runbooks.md), written from
 * the SLOs below into the two forms an operator deploys:
 *   deploy/prometheus/rules.yaml           a rules file (prometheus.yml `rule_files`, compose)
 *   deploy/base/prometheus-rule.yaml       the same groups as a PrometheusRule (Prometheus Operator)
 *   npm run ops:rules            writes both
 *   npm run ops:rules -- --check fails when either is stale (test/ops/rules.test.ts runs it)
 *
 * Why generated: every SLO needs the same seven error-ratio windows and the same two burn-rate
 * alerts (Google SRE workbook, "Alerting on SLOs", method 6: multiwindow, multi-burn-rate), so
 * writing them by hand repeats each expression 9 times and invites a window that drifts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

/** An SLI as two counters' rates: the bad events over all events, over a window `$w`. */
export interface Slo {
  /** Recording rule stem: slo:<name>:error_ratio_rate<window>. */
  readonly name: string;
  /** The alert names' stem, e.g. QuoteAvailability. */
  readonly alert: string;
  readonly objective: number;
  readonly description: string;
  /** PromQL for the error ratio over the window `$w` (substituted). */
  readonly errorRatio: string;
  /** Runbook section (docs/runbooks.md heading slug). */
  readonly runbook: string;
  /** false: too few events for a page (approvals); only the ticket alert. */
  readonly page: boolean;
}

const QUOTE = 'route=~"/cart/quote|/v2/quote|/graphql"';
/** Orders: the /v2 order in both forms, and an ACP checkout's completion (under any ACP_API_BASE_URL path). */
const ORDER =
  'route=~"/api/v2/procurement/orders|/v2/orders|.*/checkout_sessions/:id/complete",method="POST"';
const REQ = 'http_request_duration_seconds';
/** The routes the edge may shed (gateway/shed-routes.ts): all but health, metrics, operator, console and internal. */
const SHEDDABLE = 'route!~"/healthz|/readyz|/metrics|/api/v2/operator.*|/console.*|/internal/.*|unmatched"';

/**
 * Requests answered 5xx over all requests of the routes. A process that never answered a 5xx has
 * no 5xx series at all, so the errors' sum is empty, not 0: `or vector(0)` keeps the ratio at 0
 * while there is traffic (without it the SLO had no value whenever it was met).
 */
const availability = (routes: string) =>
  `(sum(rate(${REQ}_count{${routes},status=~"5.."}[$w])) or vector(0)) / sum(rate(${REQ}_count{${routes}}[$w]))`;
/** Requests slower than `le` over all requests of the routes (`le` is a bucket bound of the histogram). */
const latency = (routes: string, le: string) =>
  `1 - sum(rate(${REQ}_bucket{${routes},le="${le}"}[$w])) / sum(rate(${REQ}_count{${routes}}[$w]))`;

export const SLOS: readonly Slo[] = [
  {
    name: 'quote_availability',
    alert: 'QuoteAvailability',
    objective: 0.999,
    description: 'quotes (GET /cart/quote, GET /v2/quote, POST /graphql) answered without a 5xx',
    errorRatio: availability(QUOTE),
    runbook: 'quote-availability',
    page: true,
  },
  {
    name: 'quote_latency',
    alert: 'QuoteLatency',
    objective: 0.99,
    description: 'quotes answered within 50 ms',
    errorRatio: latency(QUOTE, '0.05'),
    runbook: 'quote-latency',
    page: true,
  },
  {
    name: 'order_availability',
    alert: 'OrderAvailability',
    objective: 0.999,
    description:
      'agent orders (POST /api/v2/procurement/orders, POST /v2/orders, an ACP checkout completion) answered without a 5xx',
    errorRatio: availability(ORDER),
    runbook: 'order-availability',
    page: true,
  },
  {
    name: 'order_latency',
    alert: 'OrderLatency',
    objective: 0.99,
    description: 'agent orders answered within 100 ms',
    errorRatio: latency(ORDER, '0.1'),
    runbook: 'order-latency',
    page: true,
  },
  {
    // Issue 48: a request over its queue-time budget is answered 503 at once (lib/http/shed.ts).
    // Shedding is the right answer to a burst, not to a fleet that is too small: past 0.1 % of a
    // month's requests it pages, as a capacity problem.
    name: 'admission',
    alert: 'Shedding',
    objective: 0.999,
    description: 'edge requests admitted rather than shed (503 at once, over their queue-time budget)',
    errorRatio: `(sum(rate(http_requests_shed_total[$w])) or vector(0)) / sum(rate(${REQ}_count{${SHEDDABLE}}[$w]))`,
    runbook: 'shedding',
    page: true,
  },
  {
    name: 'webhook_delivery',
    alert: 'WebhookDelivery',
    objective: 0.99,
    description: 'webhook deliveries delivered within 60 s of their creation',
    errorRatio:
      '1 - sum(rate(webhook_delivery_seconds_bucket{outcome="delivered",le="60"}[$w])) / sum(rate(webhook_delivery_seconds_count[$w]))',
    runbook: 'webhook-delivery',
    page: true,
  },
  {
    name: 'approval_decision',
    alert: 'ApprovalDecision',
    objective: 0.95,
    description: 'orders waiting for approval decided (approved or rejected) within 4 h',
    errorRatio:
      '1 - sum(rate(procurement_approval_decision_seconds_bucket{decision=~"approved|rejected",le="14400"}[$w])) / sum(rate(procurement_approval_decision_seconds_count[$w]))',
    runbook: 'approval-decision-time',
    page: false,
  },
];

/** The workbook's windows: a page at 14.4× over 1 h (and 5 m) or 6× over 6 h (and 30 m); a ticket at 3× over 1 d (and 2 h) or 1× over 3 d (and 6 h). */
export const WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;
const PAGE = [
  { long: '1h', short: '5m', factor: 14.4 },
  { long: '6h', short: '30m', factor: 6 },
] as const;
const TICKET = [
  { long: '1d', short: '2h', factor: 3 },
  { long: '3d', short: '6h', factor: 1 },
] as const;

const RUNBOOKS = 'docs/runbooks.md';
const runbookUrl = (section: string) => `${RUNBOOKS}#${section}`;

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const ratio = (slo: Slo, w: string) => `slo:${slo.name}:error_ratio_rate${w}`;
const round = (n: number) => Number(n.toPrecision(6));

function burnAlert(slo: Slo, severity: 'page' | 'ticket'): Rule {
  const budget = round(1 - slo.objective);
  const pairs = severity === 'page' ? PAGE : TICKET;
  const expr = pairs
    .map(
      (p) =>
        `(${ratio(slo, p.long)} > ${round(p.factor * budget)} and ${ratio(slo, p.short)} > ${round(p.factor * budget)})`,
    )
    .join('\nor\n');
  const fast = severity === 'page';
  return {
    alert: `${slo.alert}BudgetBurn${fast ? 'Fast' : 'Slow'}`,
    expr,
    labels: { severity, slo: slo.name },
    annotations: {
      summary: `${slo.alert}: the error budget burns ${fast ? 'fast (14.4× over 1 h or 6× over 6 h)' : 'steadily (3× over 1 d or 1× over 3 d)'}`,
      description: `SLO ${slo.objective * 100} % of ${slo.description}. Error ratio over 1 h: {{ $value | humanizePercentage }} (budget ${round(budget * 100)} %).`,
      runbook_url: runbookUrl(slo.runbook),
    },
  };
}

/** Alerts on one condition each (docs/runbooks.md has a section per alert). */
export const PLAIN: readonly Rule[] = [
  {
    alert: 'QuoteDependencyBreakerOpen',
    expr: 'max by (dependency) (edge_dependency_breaker_open) == 1',
    for: '1m',
    labels: { severity: 'page' },
    annotations: {
      summary: 'The quote circuit breaker of {{ $labels.dependency }} is open',
      description:
        'Quotes are answered from fallbacks (last-known or static prices, no promotions) while {{ $labels.dependency }} fails.',
      runbook_url: runbookUrl('quotedependencybreakeropen'),
    },
  },
  {
    alert: 'AgentBlocked',
    expr: 'sum(increase(agent_blocks_total[10m])) > 0',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'An agent identity was blocked after repeated contract errors',
      description: '{{ $value | humanize }} block(s) started in the last 10 minutes.',
      runbook_url: runbookUrl('agentblocked'),
    },
  },
  {
    alert: 'AgentContractErrorSpike',
    expr: `sum by (route) (rate(${REQ}_count{status="422"}[5m])) > 0.5
and
sum by (route) (rate(${REQ}_count{status="422"}[5m])) / sum by (route) (rate(${REQ}_count[5m])) > 0.1`,
    for: '5m',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'Many 422s on {{ $labels.route }}',
      description:
        'More than 0.5/s and 10 % of the requests to {{ $labels.route }} are refused by the contract (422) for 5 minutes.',
      runbook_url: runbookUrl('agentcontracterrorspike'),
    },
  },
  {
    alert: 'SpendPolicyRefusals',
    expr: 'sum by (reason) (increase(agent_spend_refusals_total[15m])) > 5',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'Spend policies refuse orders ({{ $labels.reason }})',
      description: '{{ $value | humanize }} orders refused for {{ $labels.reason }} in the last 15 minutes.',
      runbook_url: runbookUrl('spendpolicyrefusals'),
    },
  },
  {
    alert: 'ApprovalsWaiting',
    expr: 'max(procurement_pending_approval_oldest_age_seconds) > 3600',
    for: '5m',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'An order has waited for approval for more than an hour',
      description: 'The oldest pending approval has waited {{ $value | humanizeDuration }}.',
      runbook_url: runbookUrl('approvalswaiting'),
    },
  },
  {
    alert: 'ApprovalsAboutToExpire',
    expr: 'max(procurement_pending_approval_oldest_age_seconds) > 72000',
    labels: { severity: 'page' },
    annotations: {
      summary: 'An order waiting for approval expires within 4 hours',
      description:
        'The oldest pending approval has waited {{ $value | humanizeDuration }} of the 24 h ORDER_APPROVAL_TTL_SECONDS default.',
      runbook_url: runbookUrl('approvalsabouttoexpire'),
    },
  },
  {
    alert: 'WebhookDeliveriesFailing',
    expr: `sum(rate(webhook_attempts_total{outcome!="delivered"}[15m])) / sum(rate(webhook_attempts_total[15m])) > 0.5`,
    for: '15m',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'Most webhook attempts fail',
      description: '{{ $value | humanizePercentage }} of the webhook attempts of the last 15 minutes failed.',
      runbook_url: runbookUrl('webhookdeliveriesfailing'),
    },
  },
  {
    alert: 'WebhookDeliveriesDead',
    expr: 'sum(increase(webhook_delivery_seconds_count{outcome="dead"}[1h])) > 0',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'Webhook deliveries gave up (dead)',
      description:
        '{{ $value | humanize }} deliveries in the last hour ran out of attempts or met a 410; they wait for a replay.',
      runbook_url: runbookUrl('webhookdeliveriesdead'),
    },
  },
  {
    alert: 'AuditVerificationFailed',
    expr: 'sum by (result) (increase(audit_verifications_total{result!="ok"}[1h])) > 0',
    labels: { severity: 'page' },
    annotations: {
      summary: 'The audit log does not verify ({{ $labels.result }})',
      description: 'A verification of the audit chain in the last hour found {{ $labels.result }}.',
      runbook_url: runbookUrl('auditverificationfailed'),
    },
  },
  {
    alert: 'AuditLogTruncated',
    expr: 'max(audit_log_truncated) == 1',
    labels: { severity: 'page' },
    annotations: {
      summary: 'The audit log ends before its signed head',
      description: 'Entries the signed head sealed are missing from the stored log.',
      runbook_url: runbookUrl('auditlogtruncated'),
    },
  },
  {
    alert: 'DependencyUnreachable',
    expr: 'min by (dependency, instance) (dependency_up) == 0',
    for: '1m',
    labels: { severity: 'page' },
    annotations: {
      summary: '{{ $labels.instance }} cannot reach {{ $labels.dependency }}',
      description: 'The dependency did not answer within 1 s at each scrape for a minute.',
      runbook_url: runbookUrl('dependencyunreachable'),
    },
  },
  {
    alert: 'EventLoopDelayHigh',
    expr: `1 - sum by (instance) (rate(nodejs_eventloop_delay_seconds_bucket{le="0.1"}[5m])) / sum by (instance) (rate(nodejs_eventloop_delay_seconds_count[5m])) > 0.01`,
    for: '10m',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'The event loop of {{ $labels.instance }} stalls',
      description:
        '{{ $value | humanizePercentage }} of its 10 ms timer samples fired more than 100 ms late.',
      runbook_url: runbookUrl('eventloopdelayhigh'),
    },
  },
];

export function ruleGroups() {
  return [
    {
      name: 'agent-commerce-slo-recording',
      rules: SLOS.flatMap((slo) =>
        WINDOWS.map((w) => ({
          record: ratio(slo, w),
          expr: slo.errorRatio.replaceAll('$w', w),
          labels: { slo: slo.name },
        })),
      ),
    },
    {
      name: 'agent-commerce-slo-alerts',
      rules: SLOS.flatMap((slo) =>
        slo.page ? [burnAlert(slo, 'page'), burnAlert(slo, 'ticket')] : [burnAlert(slo, 'ticket')],
      ),
    },
    { name: 'agent-commerce-alerts', rules: PLAIN },
  ];
}

const HEADER = `# Generated by ci/prometheus-rules.ts (npm run ops:rules) from the SLOs in docs/slos.md; edit
# that script, not this file. Runbooks: docs/runbooks.md.
`;

export function rulesFile(): string {
  return HEADER + stringify({ groups: ruleGroups() }, { lineWidth: 0 });
}

export function prometheusRule(): string {
  return (
    HEADER +
    stringify(
      {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PrometheusRule',
        metadata: { name: 'agent-commerce', labels: { prometheus: 'agent-commerce' } },
        spec: { groups: ruleGroups() },
      },
      { lineWidth: 0 },
    )
  );
}

export const RULES_PATH = new URL('../deploy/prometheus/rules.yaml', import.meta.url);
export const PROMETHEUS_RULE_PATH = new URL('../deploy/base/prometheus-rule.yaml', import.meta.url);

if (import.meta.url === `file://${process.argv[1]}`) {
  const outputs = [
    [RULES_PATH, rulesFile()],
    [PROMETHEUS_RULE_PATH, prometheusRule()],
  ] as const;
  if (process.argv.includes('--check')) {
    const stale = outputs.filter(([path, text]) => {
      try {
        return readFileSync(path, 'utf8') !== text;
      } catch {
        return true;
      }
    });
    for (const [path] of stale)
      console.error(`${path.pathname} is stale: run \`npm run ops:rules\` and commit it.`);
    if (stale.length) process.exit(1);
    console.log('Prometheus rules are fresh');
  } else {
    for (const [path, text] of outputs) writeFileSync(path, text);
  }
}
