/**
 * Reads the Prometheus text exposition of /metrics into the three series of the Live page.
 * Only the one histogram the HTTP app exports is needed (http_request_duration_seconds), so a
 * few lines of parsing replace a Prometheus client library in the browser.
 */
export interface Sample {
  /** Total requests so far. */
  count: number;
  /** Requests answered 5xx so far. */
  errors: number;
  /** Cumulative count per bucket upper bound (seconds), all routes summed. */
  buckets: Map<number, number>;
}

const LINE = /^http_request_duration_seconds_(bucket|count)\{([^}]*)\}\s+([0-9.eE+-]+|NaN|\+Inf)/;

function label(labels: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|,)${name}="((?:[^"\\\\]|\\\\.)*)"`).exec(labels);
  return m?.[1];
}

export function parseMetrics(text: string): Sample {
  const s: Sample = { count: 0, errors: 0, buckets: new Map() };
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, kind, labels = '', raw = '0'] = m;
    const value = Number(raw);
    if (!Number.isFinite(value)) continue;
    // /metrics itself would make the chart show its own polling.
    if (label(labels, 'route') === '/metrics') continue;
    if (kind === 'count') {
      s.count += value;
      if ((label(labels, 'status') ?? '').startsWith('5')) s.errors += value;
    } else {
      const le = label(labels, 'le');
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      if (!Number.isNaN(bound)) s.buckets.set(bound, (s.buckets.get(bound) ?? 0) + value);
    }
  }
  return s;
}

export interface Point {
  rate: number;
  p99Ms: number | null;
  errorRate: number;
}

/**
 * The interval between two samples: requests per second, the p99 latency (the upper bound of
 * the bucket that holds the 99th percentile, as Prometheus' histogram_quantile interpolates
 * within it), and the share of 5xx answers.
 */
export function between(prev: Sample, next: Sample, seconds: number): Point {
  const n = Math.max(0, next.count - prev.count);
  const errors = Math.max(0, next.errors - prev.errors);
  const bounds = [...next.buckets.keys()].sort((a, b) => a - b);
  let p99Ms: number | null = null;
  if (n > 0) {
    const target = 0.99 * n;
    let lower = 0;
    let below = 0;
    for (const b of bounds) {
      const c = (next.buckets.get(b) ?? 0) - (prev.buckets.get(b) ?? 0);
      if (c >= target) {
        const upper = Number.isFinite(b) ? b : lower;
        const inBucket = c - below;
        const frac = inBucket > 0 ? (target - below) / inBucket : 1;
        p99Ms = (lower + (upper - lower) * frac) * 1000;
        break;
      }
      lower = Number.isFinite(b) ? b : lower;
      below = c;
    }
  }
  return { rate: seconds > 0 ? n / seconds : 0, p99Ms, errorRate: n > 0 ? errors / n : 0 };
}
