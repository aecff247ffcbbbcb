/**
 * Where an open-loop request's time went (CONN_TRACE=1 in the generator's worker; issue 48's
 * second-0 tail): undici's diagnostics channels give, per request, when it was due (the
 * `x-bench-due` header the generator adds in this mode), when undici created it on a client,
 * when its headers were written to a socket and when the response's headers came back; per
 * connection, when it began to connect and when it was connected. The summary splits each slow
 * request's latency into waiting for a connection (due → written) and the server (written →
 * headers), and counts the connections opened per 100 ms window.
 */
import diagnosticsChannel from 'node:diagnostics_channel';

interface Timed {
  due: number;
  created: number;
  sent?: number;
  headers?: number;
  newSocket?: boolean;
}

export function startConnTrace() {
  const requests = new Map<object, Timed>();
  // undici publishes a fresh connectParams object at each event: a connection's start is matched
  // with the oldest still connecting (an approximation when several connect at once).
  const connecting: number[] = [];
  const connections: { start: number; connected: number }[] = [];
  const fresh = new WeakSet<object>();
  const dueOf = (headers: unknown) => {
    // undici keeps a request's headers as [name, value, name, value, …].
    const h = headers as string[];
    const i = h.indexOf('x-bench-due');
    return i >= 0 ? Number(h[i + 1]) : Number.NaN;
  };
  const sub = (name: string, fn: (m: Record<string, unknown>) => void) =>
    diagnosticsChannel.channel(name).subscribe((m) => fn(m as Record<string, unknown>));
  sub('undici:request:create', (m) => {
    const r = m.request as { headers: unknown };
    requests.set(m.request as object, { due: dueOf(r.headers), created: performance.now() });
  });
  sub('undici:client:beforeConnect', () => connecting.push(performance.now()));
  sub('undici:client:connectError', () => connecting.shift());
  sub('undici:client:connected', (m) => {
    const start = connecting.shift() ?? Number.NaN;
    connections.push({ start, connected: performance.now() });
    fresh.add(m.socket as object);
  });
  sub('undici:client:sendHeaders', (m) => {
    const t = requests.get(m.request as object);
    if (!t) return;
    t.sent = performance.now();
    t.newSocket = fresh.has(m.socket as object);
    fresh.delete(m.socket as object);
  });
  sub('undici:request:headers', (m) => {
    const t = requests.get(m.request as object);
    if (t) t.headers = performance.now();
  });

  /** Lines: per 100 ms window from `from`, connections opened and the slow requests' split. */
  const summary = (from: number, windows = 30): string[] => {
    const out: string[] = [];
    const all = [...requests.values()].filter((t) => t.due >= from && t.headers !== undefined);
    for (let w = 0; w < windows; w++) {
      const [a, b] = [from + w * 100, from + (w + 1) * 100];
      const opened = connections.filter((c) => c.start >= a && c.start < b);
      const due = all.filter((t) => t.due >= a && t.due < b);
      if (due.length === 0 && opened.length === 0) continue;
      const worst = due.reduce<Timed | undefined>(
        (x, t) => (!x || (t.headers as number) - t.due > (x.headers as number) - x.due ? t : x),
        undefined,
      );
      const connectMs = opened.map((c) => c.connected - c.start);
      const slow = due.filter((t) => (t.headers as number) - t.due > 200);
      const slowNew = slow.filter((t) => t.newSocket).length;
      const f = (n: number) => n.toFixed(1);
      out.push(
        `${w * 100} ms: ${due.length} due, ${slow.length} over 200 ms (${slowNew} on a new connection), ${opened.length} connections opened (connect max ${f(Math.max(0, ...connectMs))} ms)` +
          (worst
            ? `; slowest ${f((worst.headers as number) - worst.due)} ms = fire ${f(worst.created - worst.due)} + to socket ${f((worst.sent ?? Number.NaN) - worst.created)} + server ${f((worst.headers as number) - (worst.sent ?? Number.NaN))}${worst.newSocket ? ' (new connection)' : ''}`
            : ''),
      );
    }
    return out;
  };
  return { summary };
}
