/**
 * Server side of bench/tools/ucp-ab.ts, loaded into the system under test with
 * `--require ./bench/tools/ucp-request-probe.cjs` (bench only, no product code): each UCP
 * checkout request's time on the server, from node:http's 'request' event to the response's
 * 'finish' (the answer handed to the socket), by operation (create, update, complete), with its
 * start in Unix ms so the tool can tell the rounds apart. Written to UCP_PROBE_OUT at exit as
 * lines `<start ms> <op> <ms>`. The generator's latency minus this is the time outside the
 * server's handling: the wait to be read (a busy loop, a core), the network, the generator's own.
 */
'use strict';
const http = require('node:http');
const { writeFileSync } = require('node:fs');
const { performance } = require('node:perf_hooks');

const out = [];
const opOf = (method, url) => {
  if (!url.startsWith('/ucp/checkout-sessions')) return undefined;
  if (method === 'POST' && url === '/ucp/checkout-sessions') return 'create';
  if (method === 'PUT') return 'update';
  if (method === 'POST' && url.endsWith('/complete')) return 'complete';
  return undefined;
};
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (name, ...args) {
  if (name === 'request') {
    const [req, res] = args;
    const op = opOf(req.method, req.url ?? '');
    if (op) {
      const t = performance.now();
      res.once('finish', () => {
        out.push(`${(performance.timeOrigin + t).toFixed(1)} ${op} ${(performance.now() - t).toFixed(3)}`);
      });
    }
  }
  return emit.call(this, name, ...args);
};
process.on('exit', () => {
  if (process.env.UCP_PROBE_OUT) writeFileSync(process.env.UCP_PROBE_OUT, `${out.join('\n')}\n`);
});
