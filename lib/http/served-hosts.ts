import { isIP } from 'node:net';
import type { Config } from '../config.ts';
import { isLocalName, isLoopbackAddress } from '../net/address.ts';
import { Problem } from '../problem.ts';
import { acpApiBaseUrl, publicOrigin, ucpApiBaseUrl } from '../public-origin.ts';

/**
 * Which `Host` and `Origin` headers name this system, against DNS rebinding: a web page whose
 * name the attacker re-points to 127.0.0.1 is same-origin with the system in the browser of
 * anyone who runs it, and its requests arrive from loopback. They still carry the page's own
 * name in `Host` (and `Origin`), which is never one this system serves. So what trusts the
 * caller's address (the peer-trusted X-Spiffe-Id, the console's development token) also asks
 * for a served Host, and the development token and state-changing console calls for a served
 * Origin (docs/console.md, "Hardening").
 *
 * Served hosts: loopback names (`localhost`, `*.localhost`), any IP literal (a rebinding page
 * reaches the system by its name, never by an address, so an address in `Host` is the system's
 * own), the hosts of PUBLIC_BASE_URL, ACP_API_BASE_URL and UCP_API_BASE_URL, and SERVED_HOSTS.
 * Served origins: http(s) origins whose host is a loopback name or address or one of those
 * configured names, or the request's own Host when that is a served IP literal (a console
 * opened at http://192.0.2.10:8080/). Ports are not compared: everything on a loopback or
 * configured name is the operator's own. Pure.
 */
export interface ServedHosts {
  /** Whether a `Host` header names this system. Absent or malformed: no. */
  host(header: string | undefined): boolean;
  /** Whether an `Origin` header is a page of this system, for a request with this `Host`. */
  origin(origin: string, hostHeader: string | undefined): boolean;
}

/** A `Host` header's host, lower case, without port, brackets or trailing dot; undefined if not one. */
export function hostOfHeader(header: string | undefined): string | undefined {
  if (header === undefined || header === '' || header.length > 300) return undefined;
  // Only what a Host header may hold (RFC 9110 §7.2: uri-host [":" port]); URL would otherwise
  // read userinfo, paths or a second host out of it.
  if (/[^A-Za-z0-9.\-_~%!$&'()*+,;=:[\]]/.test(header)) return undefined;
  return hostOfUrl(`http://${header}`);
}

function hostOfUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  return host === '' ? undefined : host;
}

/** An `Origin` header's host, for http(s) origins only (`null` and other schemes: undefined). */
function hostOfOrigin(origin: string): string | undefined {
  if (!/^https?:\/\/[^/?#]+$/i.test(origin)) return undefined;
  return hostOfUrl(origin);
}

export function servedHosts(
  config: Pick<
    Config,
    'SERVED_HOSTS' | 'PUBLIC_BASE_URL' | 'ACP_API_BASE_URL' | 'UCP_API_BASE_URL' | 'HOST' | 'PORT'
  >,
): ServedHosts {
  const names = new Set<string>();
  for (const url of [publicOrigin(config), acpApiBaseUrl(config), ucpApiBaseUrl(config)]) {
    const h = hostOfUrl(new URL(url).origin);
    if (h && isIP(h) === 0) names.add(h);
  }
  for (const h of config.SERVED_HOSTS) names.add(h.toLowerCase().replace(/\.$/, ''));
  const namedHere = (h: string) => isLocalName(h) || names.has(h);
  return {
    host(header) {
      const h = hostOfHeader(header);
      return h !== undefined && (isIP(h) !== 0 || namedHere(h));
    },
    origin(origin, hostHeader) {
      const h = hostOfOrigin(origin);
      if (h === undefined) return false;
      if (namedHere(h) || isLoopbackAddress(h)) return true;
      return isIP(h) !== 0 && h === hostOfHeader(hostHeader);
    },
  };
}

/** 403: a development convenience asked for under a Host this system does not serve. */
export const hostNotServed = (what: string) =>
  new Problem(
    403,
    'host-not-served',
    'Forbidden',
    `${what} answers only requests whose Host names this system (a loopback name or address, or PUBLIC_BASE_URL's host, or one in SERVED_HOSTS).`,
  );

/** 403: a state-changing call from a page of another origin. */
export const foreignOrigin = () =>
  new Problem(
    403,
    'foreign-origin',
    'Forbidden',
    "This call is refused from a page of another origin (the Origin header names no host this system serves: a loopback name, PUBLIC_BASE_URL's host, or one in SERVED_HOSTS).",
  );
