/**
 * Every PromQL expression of the rules (deploy/prometheus/rules.yaml) and of the dashboard
 * (deploy/grafana/dashboards/agent-commerce.json) names only metrics the system's /metrics
 * really exports: the embedded system is started and scraped, and the metric names are read
 * out of each expression with Prometheus's own PromQL grammar (@prometheus-io/lezer-promql, the
 * parser of Prometheus's web UI), not by a regular expression.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { scrape, selectableNames } from './exposition.ts';
import { metricNames, withoutGrafanaVariables } from './promql.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
}
const rules = (
  parse(readFileSync(join(root, 'deploy/prometheus/rules.yaml'), 'utf8')) as { groups: { rules: Rule[] }[] }
).groups.flatMap((g) => g.rules);
interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(
  readFileSync(join(root, 'deploy/grafana/dashboards/agent-commerce.json'), 'utf8'),
) as { panels: Panel[] };
const expressions = [
  ...rules.map((r) => ({ where: `rule ${r.record ?? r.alert}`, expr: r.expr })),
  ...dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: withoutGrafanaVariables(t.expr) })),
  ),
];

describe('the PromQL parser as used here', () => {
  it.each([
    ['sum by (le) (rate(a_bucket{le="0.05", route=~"/x|/y"}[5m]))', ['a_bucket']],
    ['x:y:z / on() group_left b offset 5m', ['x:y:z', 'b']],
    ['histogram_quantile(0.99, sum by (le) (rate(c[1m]))) > 1 and absent(d)', ['c', 'd']],
    ['count(sum by (rate) (e))', ['e']],
  ])('reads the metric names of %s', (expr, names) => {
    expect(metricNames(expr)).toEqual(names);
  });
  it('refuses a syntax error and a selector without a name', () => {
    expect(() => metricNames('sum(rate(a[5m])')).toThrow(/syntax error/);
    expect(() => metricNames('{__name__=~"a.*"}')).toThrow(/without a metric name/);
  });
});

describe('metric names in the rules and the dashboard', () => {
  let sys: TestSystem;
  let exported: Set<string>;
  beforeAll(async () => {
    sys = await startEmbedded();
    exported = selectableNames((await scrape(sys.url)).families);
  });
  afterAll(() => sys?.close());

  it('are all exported by /metrics (a histogram by its _bucket, _sum and _count), or recorded by a rule from such metrics', () => {
    // A recording rule's name is not on /metrics: Prometheus makes it from an expression that is
    // itself checked here, so it counts as available.
    const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
    const missing: string[] = [];
    let names = 0;
    for (const { where, expr } of expressions)
      for (const name of metricNames(expr)) {
        names++;
        if (!exported.has(name) && !recorded.has(name)) missing.push(`${where}: ${name}`);
      }
    expect(names).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it('would catch a name /metrics does not export', () => {
    expect(exported.has('http_request_duration_seconds_bucket')).toBe(true);
    expect(exported.has('http_request_duration_seconds_total')).toBe(false);
    expect(exported.has('agent_spend_refusals_total')).toBe(true);
  });
});
