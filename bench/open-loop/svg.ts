/**
 * The latency-against-offered-load picture of the open-loop group: one panel per path, offered
 * req/s across, latency down a log scale; p50, p99 and p99.9 alone, p99 with orders beside, the
 * control's p99, and the goals. Plain SVG written by hand: a chart library would be a dependency
 * (and a browser) for a dozen polylines.
 */
import { FRACTIONS, goalOf, type OpenLoopRun, PATHS, type Step } from './run.ts';

const W = 440;
const H = 300;
const M = { left: 56, right: 14, top: 34, bottom: 44 };
const Y_MIN = 0.1;
const Y_MAX = 1000;

const SERIES: {
  label: string;
  load: Step['load'];
  q: 'p50' | 'p99' | 'p999';
  color: string;
  dash?: string;
}[] = [
  { label: 'p50', load: 'alone', q: 'p50', color: '#1f77b4' },
  { label: 'p99', load: 'alone', q: 'p99', color: '#d62728' },
  { label: 'p99.9', load: 'alone', q: 'p999', color: '#7f1d1d' },
  { label: 'p99, 100 orders/s beside', load: 'mixed', q: 'p99', color: '#ff7f0e', dash: '6 4' },
  { label: 'p99, bare route (control)', load: 'control', q: 'p99', color: '#888888', dash: '2 3' },
];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function panel(run: OpenLoopRun, index: number): string {
  const path = PATHS[index] as (typeof PATHS)[number];
  const ox = (index % 2) * W;
  const oy = Math.floor(index / 2) * H;
  const max = run.maxima[path.key] ?? 1;
  const xMax = max * 0.8;
  const x = (rps: number) => ox + M.left + (rps / xMax) * (W - M.left - M.right);
  const y = (ms: number) => {
    const v = Math.min(Y_MAX, Math.max(Y_MIN, ms));
    const t = (Math.log10(v) - Math.log10(Y_MIN)) / (Math.log10(Y_MAX) - Math.log10(Y_MIN));
    return oy + H - M.bottom - t * (H - M.top - M.bottom);
  };
  const out: string[] = [];
  out.push(
    `<text x="${ox + W / 2}" y="${oy + 20}" text-anchor="middle" font-weight="bold">${esc(path.name)}</text>`,
  );
  out.push(
    `<rect x="${ox + M.left}" y="${oy + M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#ccc"/>`,
  );
  for (const ms of [0.1, 1, 10, 100, 1000]) {
    out.push(
      `<line x1="${ox + M.left}" x2="${ox + W - M.right}" y1="${y(ms)}" y2="${y(ms)}" stroke="#eee"/>`,
      `<text x="${ox + M.left - 6}" y="${y(ms) + 4}" text-anchor="end" font-size="11">${ms} ms</text>`,
    );
  }
  for (const f of FRACTIONS) {
    const rps = max * f;
    out.push(
      `<line x1="${x(rps)}" x2="${x(rps)}" y1="${oy + M.top}" y2="${oy + H - M.bottom}" stroke="#f2f2f2"/>`,
      `<text x="${x(rps)}" y="${oy + H - M.bottom + 16}" text-anchor="middle" font-size="11">${Math.round(rps)} (${f * 100} %)</text>`,
    );
    const goal = goalOf(path, f);
    if (goal !== undefined) {
      out.push(
        `<line x1="${x(rps) - 10}" x2="${x(rps) + 10}" y1="${y(goal)}" y2="${y(goal)}" stroke="#2ca02c" stroke-width="3"/>`,
      );
    }
  }
  out.push(
    `<text x="${ox + W / 2}" y="${oy + H - 8}" text-anchor="middle" font-size="11">offered req/s (share of the closed-loop max, ${Math.round(max)})</text>`,
  );
  for (const s of SERIES) {
    const points = FRACTIONS.map((f) =>
      run.steps.find((p) => p.path === path.key && p.load === s.load && p.fraction === f),
    )
      .filter((p): p is Step => p !== undefined)
      .map((p) => `${x(p.result.offered).toFixed(1)},${y(p.result[s.q]).toFixed(1)}`);
    if (points.length === 0) continue;
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''} points="${points.join(' ')}"/>`,
    );
    for (const pt of points) {
      const [px, py] = pt.split(',');
      out.push(`<circle cx="${px}" cy="${py}" r="2.5" fill="${s.color}"/>`);
    }
  }
  return out.join('\n');
}

export function latencySvg(run: OpenLoopRun, stamp: string): string {
  const rows = Math.ceil(PATHS.length / 2);
  const legendY = rows * H + 18;
  const legend = [
    ...SERIES.map(
      (s, i) =>
        `<line x1="${20 + i * 168}" x2="${44 + i * 168}" y1="${legendY}" y2="${legendY}" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/><text x="${50 + i * 168}" y="${legendY + 4}" font-size="11">${esc(s.label)}</text>`,
    ),
    `<line x1="20" x2="44" y1="${legendY + 20}" y2="${legendY + 20}" stroke="#2ca02c" stroke-width="3"/><text x="50" y="${legendY + 24}" font-size="11">p99 goal (50 %: goal, 75 %: twice it)</text>`,
    `<text x="${W}" y="${legendY + 24}" font-size="11" text-anchor="middle">${esc(stamp)}</text>`,
  ];
  const height = legendY + 36;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${height}" viewBox="0 0 ${2 * W} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...PATHS.map((_, i) => panel(run, i)),
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}
