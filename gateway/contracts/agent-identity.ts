import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { isProcurementAgent, parseSpiffeId } from '../../lib/auth/spiffe.ts';
import { uriSans } from '../agent/identity/uri-sans.ts';

/**
 * Who is asking, for contract purposes. A request comes from the workload (AI) plane when it
 * carries `X-Spiffe-Id` (the mTLS sidecar sets it) or, when this server terminates mutual TLS,
 * when its client certificate names a SPIFFE ID (an X.509-SVID). It is treated as an agent
 * whether or not the ID verifies (fail closed): presenting an identity can only narrow what a
 * caller sees. `reason` says which, for logs.
 */
export type ContractAudience =
  | { readonly kind: 'agent'; readonly procurementAgent: boolean; readonly reason: string }
  | { readonly kind: 'other' };

export interface AudienceRequest {
  readonly headers: IncomingHttpHeaders;
  readonly raw: { readonly socket: Socket | TLSSocket };
}

const OTHER: ContractAudience = { kind: 'other' };

function fromId(value: string, trustDomains: readonly string[], where: string): ContractAudience {
  const parsed = parseSpiffeId(value);
  if (!parsed.ok) return { kind: 'agent', procurementAgent: false, reason: `${where}: ${parsed.reason}` };
  const procurementAgent = isProcurementAgent(parsed.value, trustDomains);
  return {
    kind: 'agent',
    procurementAgent,
    reason: `${where}: ${procurementAgent ? 'procurement agent' : 'workload identity'}`,
  };
}

/** SPIFFE URI SANs of the client certificate, once per connection. */
const svidsByConnection = new WeakMap<TLSSocket, string[]>();

function clientSpiffeIds(socket: Socket | TLSSocket): string[] {
  const tls = socket as TLSSocket;
  if (typeof tls.getPeerX509Certificate !== 'function') return [];
  let ids = svidsByConnection.get(tls);
  if (!ids) {
    const cert = tls.getPeerX509Certificate();
    try {
      ids = cert ? uriSans(cert).filter((u) => u.toLowerCase().startsWith('spiffe:')) : [];
    } catch {
      ids = [];
    }
    svidsByConnection.set(tls, ids);
  }
  return ids;
}

export function contractAudience(req: AudienceRequest, trustDomains: readonly string[]): ContractAudience {
  const raw = req.headers['x-spiffe-id'];
  if (raw !== undefined)
    return fromId(Array.isArray(raw) ? (raw[0] ?? '') : raw, trustDomains, 'X-Spiffe-Id');
  const [svid, ...more] = clientSpiffeIds(req.raw.socket);
  if (svid === undefined) return OTHER;
  return more.length > 0
    ? { kind: 'agent', procurementAgent: false, reason: 'client certificate: more than one SPIFFE ID' }
    : fromId(svid, trustDomains, 'client certificate');
}
