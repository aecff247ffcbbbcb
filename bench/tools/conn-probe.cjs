/**
 * Server side of issue 48's second-0 trace, loaded into the system under test with
 * `EXTRA="--require ./bench/tools/conn-probe.cjs" tsx bench/tools/warm-start.ts` (bench only,
 * no product code): per socket, when node:net handed it over ('connection'), when node:http emitted its first request and when that response finished;
 * per 100 ms window after the first /readyz answered 200, written at exit to PROBE_OUT (or stderr), with the
 * event loop's delay (perf_hooks). Tells a wait before the request event (accept, parse)
 * from one in the handler.
 */
'use strict';
const net = require('node:net');
const http = require('node:http');
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');

const sockets = [];
let readyAt;
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const loopWindows = [];
const timer = setInterval(() => {
  loopWindows.push({ at: performance.now(), max: loop.max / 1e6, mean: loop.mean / 1e6 });
  loop.reset();
}, 100);
timer.unref();

const emit = net.Server.prototype.emit;
net.Server.prototype.emit = function (name, ...args) {
  if (name === 'connection' && this instanceof http.Server) {
    const s = { accepted: performance.now() };
    sockets.push(s);
    args[0].__probe = s;
  } else if (name === 'request') {
    const [req, res] = args;
    const s = req.socket.__probe;
    const t = performance.now();
    if (s && s.request === undefined) s.request = t;
    res.once('finish', () => {
      if (s && s.finished === undefined) s.finished = performance.now();
      if (readyAt === undefined && req.url === '/readyz' && res.statusCode === 200) readyAt = t;
    });
  }
  return emit.call(this, name, ...args);
};

process.on('exit', () => {
  if (readyAt === undefined) return;
  const out = [];
  const f = (n) => (Number.isFinite(n) ? n.toFixed(1) : '-');
  for (let w = -5; w < 30; w++) {
    const [a, b] = [readyAt + w * 100, readyAt + (w + 1) * 100];
    const xs = sockets.filter((s) => s.accepted >= a && s.accepted < b);
    const lw = loopWindows.find((l) => l.at > a && l.at <= b + 1);
    const max = (g) => Math.max(Number.NEGATIVE_INFINITY, ...xs.map(g).filter(Number.isFinite));
    out.push(
      `probe ${w * 100} ms: ${xs.length} accepted; accept→first request max ${f(max((s) => s.request - s.accepted))}, request→finish ${f(max((s) => s.finished - s.request))} ms; loop delay max ${f(lw?.max)} mean ${f(lw?.mean)} ms`,
    );
  }
  // Every socket after ready, by the second it was accepted in: a connection the client opened in
  // second 0 but the server accepted seconds later shows here (with accept→first request short).
  const perSecond = new Map();
  for (const s of sockets.filter((x) => x.accepted >= readyAt)) {
    const k = Math.floor((s.accepted - readyAt) / 1000);
    perSecond.set(k, (perSecond.get(k) ?? 0) + 1);
  }
  out.push(
    `probe accepted per second after ready: ${[...perSecond].map(([k, n]) => `${k}: ${n}`).join(', ')}`,
  );
  const text = `${out.join('\n')}\n`;
  if (process.env.PROBE_OUT) require('node:fs').writeFileSync(process.env.PROBE_OUT, text);
  else process.stderr.write(text);
});
