/**
 * Metric names out of PromQL, with Prometheus's own grammar (@prometheus-io/lezer-promql, the
 * parser of Prometheus's web UI) rather than a regular expression: label values, function
 * names, `by (…)` lists and durations never pass for metric names.
 */
import { parser } from '@prometheus-io/lezer-promql';

/** Grafana's interval variables, which are not PromQL, as the durations Grafana puts in their place. */
export function withoutGrafanaVariables(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__interval', '15s')
    .replaceAll('$__range', '1h');
}

/** The metric names an expression selects; throws on a syntax error or a selector without a name. */
export function metricNames(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | undefined;
  tree.iterate({
    enter(node) {
      if (node.type.isError) error ??= node.from;
      if (node.name !== 'VectorSelector') return;
      const id = node.node.getChild('Identifier');
      if (!id) throw new Error(`a selector without a metric name in: ${expr}`);
      names.push(expr.slice(id.from, id.to));
    },
  });
  if (error !== undefined) throw new Error(`PromQL syntax error at ${error} in: ${expr}`);
  return names;
}
