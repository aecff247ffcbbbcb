/**
 * Reading what /metrics really serves (the Prometheus text exposition format 0.0.4 that
 * prom-client writes): the metric families it declares and its samples.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  /** Family name → type, from the `# TYPE` lines (a family is declared even before it has a sample). */
  readonly families: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Exposition {
  const families = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (name && type) families.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`not an exposition line: ${line}`);
    let rest = line.slice(name.length);
    const labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const end = rest.lastIndexOf('}');
      for (const m of rest.slice(1, end).matchAll(LABEL))
        labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(end + 1);
    }
    samples.push({ name, labels, value: Number(rest.trim().split(' ')[0]) });
  }
  return { families, samples };
}

/** The sum of the samples of `name` whose labels include `match`. */
export function sampleSum(e: Exposition, name: string, match: Record<string, string> = {}): number {
  return e.samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/**
 * The metric families a PromQL selector may name given what is exported: a family itself, and
 * for a histogram its `_bucket`, `_sum` and `_count` series (a summary: `_sum`, `_count`).
 */
export function selectableNames(families: ReadonlyMap<string, string>): Set<string> {
  const names = new Set<string>();
  for (const [name, type] of families) {
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

export async function scrape(baseUrl: string): Promise<Exposition> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  return parseExposition(await res.text());
}
