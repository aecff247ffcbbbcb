import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook must not reach unless WEBHOOK_ALLOW_PRIVATE_URLS is on: loopback,
 * private networks, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT,
 * unspecified, multicast and reserved. A webhook URL is chosen by an operator but fetched by
 * the server, so without this list it would be a way to make the server call its own
 * neighbours (SSRF).
 */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** True for an IP address a webhook may not reach by default (IPv4-mapped IPv6 judged as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  const mapped = MAPPED_V4.exec(ip);
  if (mapped) return PRIVATE.check(mapped[1] as string, 'ipv4');
  const family = isIP(ip);
  if (family === 4) return PRIVATE.check(ip, 'ipv4');
  if (family === 6) return PRIVATE.check(ip, 'ipv6');
  return false;
}

export const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/**
 * A webhook URL as registered: absolute http(s), no credentials (they would be sent in clear
 * to anyone reading the endpoint list, and signatures are the authentication), no fragment,
 * at most 2048 characters. Loopback and private IP literals and `localhost` are refused
 * unless allowed; host names are judged again at delivery time, on the addresses they
 * resolve to (a name can point anywhere, and can change after registration). Pure.
 */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): UrlCheck {
  if (raw.length > MAX_URL_LENGTH)
    return { ok: false, reason: `is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'must use http or https' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (url.hash || raw.includes('#')) return { ok: false, reason: 'must not have a fragment' };
  if (!url.hostname) return { ok: false, reason: 'has no host' };
  if (!allowPrivate && (isLocalName(url.hostname) || isPrivateAddress(url.hostname)))
    return { ok: false, reason: 'points to a loopback or private address' };
  return { ok: true, url: url.toString() };
}

/** `localhost` or a name under it (RFC 6761), case and a trailing dot aside. */
export const isLocalName = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};
