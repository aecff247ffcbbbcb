/**
 * The requests of `npm run catalog:import` (scripts/catalog-import.ts), through Node's own
 * `http`/`https`: undici, which the command used for its upload, took 83–108 ms to load and the
 * global fetch 25 ms more at its first call, of a command whose whole start (node, its modules, the
 * token) took 0.35–0.45 s, paid by every import (docs/catalog.md, "Import"). A stream body is
 * piped with backpressure (a 2.3 GB file is never held: fetch read it into memory ahead of the
 * network). A connection silent for IDLE_MS in either direction is given up (undici's default
 * body timeout, the command's before): longer than a commit of another import or a slow store
 * holds a chunk, and a half-open connection no longer hangs the command for ever.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const IDLE_MS = 300_000;

export interface Reply {
  readonly status: number;
  readonly text: string;
}

/** POSTs `body` (a string, or a stream sent chunked) to `url`; the reply's status and text. */
export function post(url: string, headers: Record<string, string>, body: string | Readable): Promise<Reply> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? https.request : http.request;
  return new Promise<Reply>((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers:
          typeof body === 'string'
            ? { ...headers, 'content-length': String(Buffer.byteLength(body)) }
            : headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.setTimeout(IDLE_MS, () =>
      req.destroy(new Error(`no answer from ${target.origin} for ${IDLE_MS / 1000} s`)),
    );
    if (typeof body === 'string') req.end(body);
    // A server that answers before the body's end (a refusal, a failed import) closes the
    // connection: the reply is what counts, and the pipe's error after it changes nothing.
    else pipeline(body, req).catch(reject);
  });
}
