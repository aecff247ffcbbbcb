import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The one judgement of "may the server connect to this address" for every URL the server
 * fetches on someone else's word: operators' webhook endpoints (subgraphs/procurement/webhooks)
 * and UCP platform profiles (gateway/agent/ucp). Only global unicast is public; everything else
 * (loopback, private, link-local, unique-local, carrier-grade NAT, multicast, unspecified,
 * reserved and documentation ranges, and the IPv6 forms that carry an IPv4 address to a relay or
 * translator: 6to4, Teredo, NAT64, IPv4-translated, IPv4-compatible) is refused. The ranges are
 * ipaddr.js's tables (kept up to date with the IANA registries), not a list of our own, with two
 * additions it counts as unicast: IPv6 outside 2000::/3 (not allocated for global unicast, which
 * is where `::7f00:1`, an IPv4-compatible loopback, lands) is `reserved`. An IPv4-mapped address
 * (`::ffff:a.b.c.d`) is the IPv4 address it carries: the socket connects to that one.
 */

/** ipaddr.js's range names, plus `reserved` for IPv6 outside 2000::/3; `unicast` is the public one. */
export type AddressRange = string;

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * The range of an IP address written as Node writes one (dotted IPv4, IPv6 with or without
 * brackets or a zone): undefined for anything else, a host name included. Pure; never throws.
 */
export function addressRange(address: string): AddressRange | undefined {
  const ip = address.replace(/^\[(.*)\]$/, '$1');
  // node:net's grammar, not ipaddr's: ipaddr also reads "127.1" and "0x7f.1" as addresses, which
  // a URL parser has already normalised and a resolver never returns.
  if (isIP(ip) === 0) return undefined;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return undefined;
  }
  if (parsed.kind() === 'ipv4') return (parsed as ipaddr.IPv4).range();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range();
  const range: string = v6.range();
  if (range === 'unicast' && !v6.match(GLOBAL_UNICAST_V6)) return 'reserved';
  return range;
}

/** An IP address the server may connect to on a caller's word: global unicast. */
export const isPublicAddress = (address: string): boolean => addressRange(address) === 'unicast';

/**
 * An IP address the server must not reach by default (every range but global unicast). A host
 * name is not an address: false (it is judged on what it resolves to, lib/net/guarded-lookup.ts).
 */
export function isPrivateAddress(address: string): boolean {
  const range = addressRange(address);
  return range !== undefined && range !== 'unicast';
}

/** `localhost` or a name under it (RFC 6761), case and a trailing dot aside. */
export const isLocalName = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};

/** A loopback address (127.0.0.0/8, ::1, or IPv4-mapped loopback). */
export const isLoopbackAddress = (address: string): boolean => addressRange(address) === 'loopback';

/**
 * Who a client is, for per-source budgets: its IPv4 address, or its IPv6 /64 (one host is
 * given a whole /64, so counting single IPv6 addresses would give it 2^64 budgets).
 */
export function sourceOf(address: string | undefined): string {
  const ip = (address ?? '').replace(/^\[(.*)\]$/, '$1');
  if (isIP(ip) === 0) return ip || 'unknown';
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}
