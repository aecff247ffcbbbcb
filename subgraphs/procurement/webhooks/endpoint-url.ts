import { isLocalName, isPrivateAddress } from '../../../lib/net/address.ts';

export const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/**
 * A webhook URL as registered: absolute http(s), no credentials (they would be sent in clear
 * to anyone reading the endpoint list, and signatures are the authentication), no fragment,
 * at most 2048 characters. IP literals that are not public (lib/net/address.ts: loopback,
 * private, link-local, unique-local, the IPv6 forms carrying an IPv4 address, reserved, …) and
 * `localhost` are refused unless allowed: a webhook URL is chosen by an operator but fetched by
 * the server, so without this it would make the server call its own neighbours (SSRF). Host
 * names are judged again at delivery time, on the addresses they resolve to (a name can point
 * anywhere, and can change after registration: lib/net/guarded-lookup.ts). Pure.
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
