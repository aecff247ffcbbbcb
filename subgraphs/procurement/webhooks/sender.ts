import type { Agent } from 'undici';
import { guardedLookup } from '../../../lib/net/guarded-lookup.ts';
import { acpHeaders } from './acp-signature.ts';
import { checkEndpointUrl } from './endpoint-url.ts';
import type { ClaimedDelivery } from './types.ts';
import { type UcpSigner, ucpHeaders } from './ucp-signature.ts';

/** What one HTTP attempt came to: the receiver's status, or why there was none. */
export type SendResult = { readonly statusCode: number } | { readonly error: string };

export interface Sender {
  send(d: ClaimedDelivery, now: Date): Promise<SendResult>;
  close(): Promise<void>;
}

export interface SenderOptions {
  readonly timeoutMs: number;
  readonly allowPrivate: boolean;
  readonly userAgent?: string;
  /** Signs UCP order webhooks (the business's key and profile); without it a `ucp` delivery fails. */
  readonly ucp?: UcpSigner;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` is the event id (the same on
 * every attempt and replay, so a receiver can drop duplicates), `webhook-timestamp` the
 * attempt's time, and one `v1,` signature per live secret (two during a rotation's grace
 * period; a verifier accepts either).
 */
export async function signatureHeaders(
  d: Pick<ClaimedDelivery, 'eventId' | 'payload' | 'secrets'>,
  now: Date,
): Promise<Record<string, string>> {
  // Loaded on first delivery: processes without endpoints never hold it.
  const { Webhook } = await import('standardwebhooks');
  return {
    'webhook-id': d.eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': d.secrets.map((s) => new Webhook(s).sign(d.eventId, now, d.payload)).join(' '),
  };
}

/** The framing and signature headers of one attempt, by the endpoint's scheme. */
async function headersOf(d: ClaimedDelivery, now: Date, ucp?: UcpSigner): Promise<Record<string, string>> {
  if (d.scheme === 'acp') return acpHeaders(d, now);
  if (d.scheme === 'ucp') {
    if (!ucp) throw new Error('no UCP signing key configured');
    return ucpHeaders(d, ucp, now);
  }
  return {
    'content-type': 'application/cloudevents+json; charset=utf-8',
    ...(await signatureHeaders(d, now)),
  };
}

/** POSTs deliveries with undici (one connection pool for all endpoints, bounded per origin). */
export function httpSender(opts: SenderOptions): Sender {
  // Loaded on first delivery, like the signer: a process without endpoints never holds them.
  let client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;
  const connect = () => {
    client ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connections: 4,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        connect: { timeout: opts.timeoutMs, ...(opts.allowPrivate ? {} : { lookup: guardedLookup }) },
      }),
    }));
    return client;
  };
  return {
    async send(d, now) {
      // Judged again at send time: the setting may have changed since registration.
      const target = checkEndpointUrl(d.url, opts.allowPrivate);
      if (!target.ok) return { error: `endpoint URL ${target.reason}` };
      const { agent, request } = await connect();
      try {
        const res = await request(d.url, {
          method: 'POST',
          dispatcher: agent,
          signal: AbortSignal.timeout(opts.timeoutMs),
          headers: {
            'user-agent': opts.userAgent ?? 'agent-commerce-webhooks/1',
            ...(await headersOf(d, now, opts.ucp)),
          },
          body: d.payload,
          maxRedirections: 0,
        });
        // The answer's body is not needed; reading it (bounded by the timeout) frees the connection.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
        return { statusCode: res.statusCode };
      } catch (err) {
        return { error: describe(err) };
      }
    },
    async close() {
      if (client) await (await client).agent.close();
    },
  };
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : undefined;
  if (err.name === 'TimeoutError' || err.name === 'AbortError' || /timeout/i.test(err.name))
    return 'timed out';
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? (err as NodeJS.ErrnoException).code;
  return code ? `${code}: ${cause?.message ?? err.message}` : err.message;
}
