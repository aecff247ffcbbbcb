/**
 * Live: request rate, p99 latency and error rate of this gateway, from its Prometheus /metrics,
 * sampled every 2 s while the page is open (the last 5 minutes). uPlot is loaded with this page
 * only, so the first page stays small.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ApiError } from '../api.ts';
import { text } from '../api.ts';
import { between, type Point, parseMetrics, type Sample } from '../metrics.ts';
import { asApiError } from '../ui/async.ts';
import { ProblemView } from '../ui/parts.tsx';

const EVERY_MS = 2000;
const KEEP = 150;

export function LivePage() {
  const host = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [last, setLast] = useState<Point | null>(null);
  useEffect(() => {
    let plot: uPlot | undefined;
    let stopped = false;
    let prev: { at: number; sample: Sample } | undefined;
    const series: [number[], number[], (number | null)[], number[]] = [[], [], [], []];
    const tick = async () => {
      try {
        const sample = parseMetrics(await text('/metrics'));
        const at = Date.now();
        if (prev) {
          const p = between(prev.sample, sample, (at - prev.at) / 1000);
          series[0].push(at / 1000);
          series[1].push(p.rate);
          series[2].push(p.p99Ms);
          series[3].push(p.errorRate * 100);
          for (const s of series) if (s.length > KEEP) s.shift();
          setLast(p);
          plot?.setData(series as uPlot.AlignedData);
        }
        prev = { at, sample };
        setError(null);
      } catch (err) {
        setError(asApiError(err));
      }
    };
    void (async () => {
      const { default: UPlot } = await import('uplot');
      if (stopped || !host.current) return;
      const width = Math.max(280, host.current.clientWidth);
      plot = new UPlot(
        {
          width,
          height: 320,
          series: [
            {},
            { label: 'requests/s', stroke: '#2563eb', scale: 'rate' },
            { label: 'p99 ms', stroke: '#d97706', scale: 'ms' },
            { label: 'errors %', stroke: '#dc2626', scale: 'pct' },
          ],
          axes: [{}, { scale: 'rate', label: 'req/s' }, { scale: 'ms', side: 1, label: 'ms' }],
          scales: { pct: { range: [0, 100] } },
        },
        series as uPlot.AlignedData,
        host.current,
      );
    })();
    void tick();
    const t = setInterval(tick, EVERY_MS);
    const onResize = () => host.current && plot?.setSize({ width: host.current.clientWidth, height: 320 });
    addEventListener('resize', onResize);
    return () => {
      stopped = true;
      clearInterval(t);
      removeEventListener('resize', onResize);
      plot?.destroy();
    };
  }, []);
  return (
    <section aria-labelledby="live-h">
      <h1 id="live-h">Live</h1>
      <p class="note">This gateway's HTTP traffic from /metrics, sampled every 2 s (the last 5 minutes).</p>
      {error ? <ProblemView error={error} /> : null}
      <p role="status" data-testid="live-now">
        {last
          ? `${last.rate.toFixed(1)} requests/s, p99 ${last.p99Ms === null ? '—' : `${last.p99Ms.toFixed(1)} ms`}, ${(last.errorRate * 100).toFixed(1)} % errors`
          : 'Waiting for two samples…'}
      </p>
      <div
        ref={host}
        class="chart"
        aria-label="Request rate, p99 latency and error rate over time"
        role="img"
      />
    </section>
  );
}
