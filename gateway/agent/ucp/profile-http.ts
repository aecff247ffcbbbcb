import type { Agent } from 'undici';
import { guardedLookup, PRIVATE_ADDRESS_CODE } from '../../../lib/net/guarded-lookup.ts';

/**
 * One GET of a platform profile: over the SSRF guard's lookup (unless insecure profiles are
 * allowed), never following a redirect, within `timeoutMs`, at most `maxBytes` read. The answer
 * is the body, or why there is none: `reason` is for the log (it names what the far side did:
 * a TLS error, a refused port, a status), never for an unauthenticated caller.
 */
export type ProfileBody =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly kind: 'unreachable' | 'too-large'; readonly reason: string };

export interface ProfileHttpOptions {
  readonly timeoutMs: number;
  readonly allowInsecure: boolean;
  readonly maxBytes: number;
}

export interface ProfileHttp {
  get(url: string): Promise<ProfileBody>;
  close(): Promise<void>;
}

export function profileHttp(o: ProfileHttpOptions): ProfileHttp {
  // Loaded on the first fetch: a process no platform calls never holds it.
  let client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;
  const connect = () => {
    client ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connections: 2,
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
        connect: { timeout: o.timeoutMs, ...(o.allowInsecure ? {} : { lookup: guardedLookup }) },
      }),
    }));
    return client;
  };
  const unreachable = (reason: string): ProfileBody => ({ ok: false, kind: 'unreachable', reason });
  const tooLarge: ProfileBody = { ok: false, kind: 'too-large', reason: `larger than ${o.maxBytes} bytes` };

  return {
    async get(url) {
      const { agent, request } = await connect();
      try {
        const res = await request(url, {
          method: 'GET',
          dispatcher: agent,
          signal: AbortSignal.timeout(o.timeoutMs),
          headers: { accept: 'application/json', 'user-agent': 'agent-commerce-ucp/1' },
          maxRedirections: 0,
        });
        if (res.statusCode < 200 || res.statusCode > 299) {
          await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
          return unreachable(
            res.statusCode >= 300 && res.statusCode < 400
              ? `it answered ${res.statusCode} (redirects are not followed)`
              : `it answered ${res.statusCode}`,
          );
        }
        const length = Number(res.headers['content-length']);
        if (Number.isFinite(length) && length > o.maxBytes) {
          await res.body.dump({ limit: 0 }).catch(() => {});
          return tooLarge;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length;
          if (size > o.maxBytes) {
            res.body.destroy();
            return tooLarge;
          }
          chunks.push(chunk as Buffer);
        }
        return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
      } catch (err) {
        return unreachable(describe(err));
      }
    },
    async close() {
      if (client) await (await client).agent.close();
    },
  };
}

function describe(err: unknown): string {
  const e = err as {
    name?: string;
    code?: string;
    cause?: { code?: string; message?: string };
    message?: string;
  };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  const code = e.cause?.code ?? e.code;
  if (code === PRIVATE_ADDRESS_CODE)
    return e.cause?.message ?? e.message ?? 'it resolves to a private address';
  return code ?? e.message ?? 'failed';
}
