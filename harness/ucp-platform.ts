/**
 * A UCP platform's view of the running system, for the tests and the benchmarks (bench/ucp,
 * bench/token-check): its profile served by a real HTTP server on loopback (the system runs
 * with UCP_PROFILE_ALLOW_INSECURE), a checkout API key issued by an operator (the ACP issue's
 * key store), and calls to the REST binding with `UCP-Agent`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// files.ts, not the schema index: the benchmarks' load workers import this file and need no Ajv.
import { UCP_VERSION } from '../gateway/agent/ucp/schema/files.ts';

const SPEC = `https://ucp.dev/${UCP_VERSION}/specification`;
const SCHEMAS = `https://ucp.dev/${UCP_VERSION}/schemas`;

/** The buyer's shipping address the UCP tests send (types/postal_address.json). */
export const UCP_ADDRESS = {
  first_name: 'Jane',
  last_name: 'Doe',
  street_address: '1 Dock Rd',
  address_locality: 'Springfield',
  address_region: 'IL',
  postal_code: '62701',
  address_country: 'US',
} as const;

/** A platform profile valid against the vendored `platform_profile`, with the capabilities named. */
export function platformProfile(
  o: {
    version?: string;
    capabilities?: string[];
    webhookUrl?: string;
    signingKeys?: Record<string, unknown>[];
  } = {},
): Record<string, unknown> {
  const version = o.version ?? UCP_VERSION;
  const names = o.capabilities ?? ['checkout', 'order', 'discount', 'fulfillment'];
  const capabilities: Record<string, unknown[]> = {};
  for (const n of names)
    capabilities[`dev.ucp.shopping.${n}`] = [
      {
        version,
        spec: `${SPEC}/${n}`,
        schema: `${SCHEMAS}/shopping/${n}.json`,
        ...(n === 'discount' || n === 'fulfillment' || n === 'buyer_consent'
          ? { extends: 'dev.ucp.shopping.checkout' }
          : {}),
        ...(n === 'order' && o.webhookUrl ? { config: { webhook_url: o.webhookUrl } } : {}),
      },
    ];
  return {
    ucp: {
      version,
      services: {
        'dev.ucp.shopping': [
          {
            version,
            spec: `${SPEC}/overview`,
            transport: 'rest',
            schema: `https://ucp.dev/${UCP_VERSION}/services/shopping/rest.openapi.json`,
          },
        ],
      },
      capabilities,
      payment_handlers: {},
    },
    signing_keys: o.signingKeys ?? [],
  };
}

export interface ProfileServer {
  readonly origin: string;
  /** Serves `body` (JSON unless a string) at `path` with `status`. */
  set(path: string, body: unknown, status?: number): string;
  /** How many times `path` was fetched. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startProfileServer(): Promise<ProfileServer> {
  const routes = new Map<string, { body: string; status: number }>();
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const r = routes.get(path);
    if (!r) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(r.status, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
    res.end(r.body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    set(path, body, status = 200) {
      routes.set(path, { body: typeof body === 'string' ? body : JSON.stringify(body), status });
      return `${origin}${path}`;
    },
    hits: (path) => counts.get(path) ?? 0,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

export interface UcpReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

let keys = 0;

/** One call to the UCP REST binding; writes carry a fresh Idempotency-Key unless one is given (or null: none). */
export async function ucpCall(
  base: string,
  o: { key?: string; profileUrl?: string | null },
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
  headers: Record<string, string | null> = {},
): Promise<UcpReply> {
  const h: Record<string, string> = {
    ...(o.profileUrl ? { 'ucp-agent': `profile="${o.profileUrl}"` } : {}),
    ...(o.key ? { authorization: `Bearer ${o.key}` } : {}),
    ...(method !== 'GET' ? { 'idempotency-key': `ucp-${process.pid}-${++keys}-${Date.now()}` } : {}),
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
  };
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k];
    else h[k] = v;
  }
  const res = await fetch(`${base}/ucp${path}`, {
    method,
    headers: h,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/**
 * A completion's `payment`: the purchase-order instrument, selected, with the credential (a
 * purchase order number, or the credential as given, for a test of a bad one).
 */
export const purchaseOrderPayment = (credential: string | Record<string, unknown>) => ({
  instruments: [
    {
      id: 'po_1',
      handler_id: 'purchase_order',
      type: 'purchase_order',
      selected: true,
      credential:
        typeof credential === 'string'
          ? { type: 'purchase_order', purchase_order_number: credential }
          : credential,
    },
  ],
});

/** `totals[]` as a map by type. */
export const totalsOf = (body: Record<string, unknown>): Record<string, number> =>
  Object.fromEntries(
    ((body.totals ?? []) as { type: string; amount: number }[]).map((t) => [t.type, t.amount]),
  );
