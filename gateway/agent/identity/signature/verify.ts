import type { IncomingHttpHeaders } from 'node:http';
import { type ComponentParser, httpbis } from 'http-message-signatures';
import {
  type Dictionary,
  type InnerList,
  isInnerList,
  type Parameters,
  parseDictionary,
  parseItem,
  serializeItem,
  serializeList,
  Token,
} from 'structured-headers';
import type { Clock } from '../../../../lib/clock.ts';
import { type ExpectedDigest, parseContentDigest } from '../../../../lib/http-signature/digest.ts';
import type { AgentKeyRegistry } from './keys.ts';
import type { NonceStore } from './nonce-store.ts';

/** The Web Bot Auth profile's tag (draft-meunier-web-bot-auth-architecture). */
export const WEB_BOT_AUTH_TAG = 'web-bot-auth';

export interface SignatureOptions {
  readonly keys: AgentKeyRegistry;
  readonly nonces: NonceStore;
  readonly clock: Clock;
  /** How far `created` may be ahead of our clock and `expires` behind it. */
  readonly skewSeconds: number;
  /** Longest `expires` − `created` accepted. */
  readonly maxValiditySeconds: number;
}

/** The parts of a received request a signature can cover, as they arrived (not normalised). */
export interface SignedMessage {
  readonly method: string;
  /** The request target as sent: path and query. */
  readonly target: string;
  readonly scheme: 'http' | 'https';
  readonly headers: IncomingHttpHeaders;
}

/** Machine-readable reasons, in the problem's `signature_error` (docs/signatures.md lists them). */
export type SignatureFailure =
  | 'malformed'
  | 'not-web-bot-auth'
  | 'unknown-key'
  | 'unsupported-algorithm'
  | 'not-yet-valid'
  | 'expired'
  | 'validity-too-long'
  | 'missing-component'
  | 'invalid-signature'
  | 'replayed-nonce'
  | 'content-digest'
  | 'identity-mismatch';

export type SignatureVerdict =
  | { ok: true; spiffeId: string; keyid: string; digest: ExpectedDigest | undefined }
  | { ok: false; code: SignatureFailure; reason: string };

const fail = (code: SignatureFailure, reason: string): SignatureVerdict => ({ ok: false, code, reason });

/** A request is "signed" as soon as it carries either field: half a signature is refused, not ignored. */
export const carriesSignature = (headers: IncomingHttpHeaders): boolean =>
  headers.signature !== undefined || headers['signature-input'] !== undefined;

/** A request with a body must bind it (Content-Digest) and how it is to be read (Content-Type). */
export const hasBody = (m: SignedMessage): boolean =>
  !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(m.method) ||
  (m.headers['content-length'] !== undefined && m.headers['content-length'] !== '0') ||
  m.headers['transfer-encoding'] !== undefined;

/** What must be covered: RFC 9421's request identity, the body binding, the agent's directory. */
export function requiredComponents(m: SignedMessage): string[] {
  const required = ['@method', '@authority', '@path'];
  if (m.target.includes('?')) required.push('@query');
  if (hasBody(m)) required.push('content-digest', 'content-type');
  if (m.headers['signature-agent'] !== undefined) required.push('signature-agent');
  return required;
}

const DEFAULT_PORT = { http: '80', https: '443' } as const;

/**
 * @authority, @path and @query from the request as received (Host and the raw target), not
 * from a URL object: the WHATWG URL parser resolves dot segments and re-encodes, so a path
 * Fastify routes one way could be signed as another.
 */
function componentsOf(m: SignedMessage): ComponentParser {
  const q = m.target.indexOf('?');
  const path = q < 0 ? m.target : m.target.slice(0, q);
  return (name) => {
    switch (name) {
      case '@authority': {
        const host = (m.headers.host ?? '').toLowerCase();
        const port = `:${DEFAULT_PORT[m.scheme]}`;
        return [host.endsWith(port) ? host.slice(0, -port.length) : host];
      }
      case '@path':
        return [path || '/'];
      case '@query':
        return [q < 0 ? '?' : m.target.slice(q)];
      default:
        return null;
    }
  };
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);

function parseDict(field: string | undefined, name: string): Dictionary | string {
  if (field === undefined) return `${name} is missing`;
  try {
    return parseDictionary(field);
  } catch {
    return `${name} is not a structured dictionary`;
  }
}

type Selected = { label: string; input: InnerList; signature: Buffer } | { failure: SignatureVerdict };

/** The one Web Bot Auth signature of the request, or why there is none. */
function selectSignature(m: SignedMessage): Selected {
  const inputs = parseDict(one(m.headers['signature-input']), 'Signature-Input');
  if (typeof inputs === 'string') return { failure: fail('malformed', inputs) };
  const signatures = parseDict(one(m.headers.signature), 'Signature');
  if (typeof signatures === 'string') return { failure: fail('malformed', signatures) };
  const tagged = [...inputs].filter(([, v]) => v[1].get('tag') === WEB_BOT_AUTH_TAG);
  const [first, second] = tagged;
  if (!first) return { failure: fail('not-web-bot-auth', `no signature has tag="${WEB_BOT_AUTH_TAG}"`) };
  if (second) return { failure: fail('malformed', `more than one signature has tag="${WEB_BOT_AUTH_TAG}"`) };
  const [label, input] = first;
  if (!isInnerList(input))
    return { failure: fail('malformed', `Signature-Input ${label} is not an inner list`) };
  const bytes = signatures.get(label)?.[0];
  if (!(bytes instanceof ArrayBuffer))
    return { failure: fail('malformed', `Signature has no byte sequence labelled ${label}`) };
  return { label, input, signature: Buffer.from(bytes) };
}

interface Params {
  created: number;
  expires: number;
  nonce: string;
  keyid: string;
  alg: string | undefined;
}

function readParams(p: Parameters): Params | string {
  const created = p.get('created');
  const expires = p.get('expires');
  const nonce = p.get('nonce');
  const keyid = p.get('keyid');
  const alg = p.get('alg');
  if (!Number.isSafeInteger(created)) return 'created must be an integer (seconds since the epoch)';
  if (!Number.isSafeInteger(expires)) return 'expires must be an integer (seconds since the epoch)';
  if (typeof nonce !== 'string' || nonce.length < 8 || nonce.length > 256)
    return 'nonce must be a string of 8 to 256 characters';
  if (typeof keyid !== 'string' || keyid === '') return 'keyid must be a string (the key JWK thumbprint)';
  if (alg !== undefined && typeof alg !== 'string' && !(alg instanceof Token)) return 'alg must be a string';
  return { created: created as number, expires: expires as number, nonce, keyid, alg: alg?.toString() };
}

/**
 * Verifies the request's RFC 9421 signature in the Web Bot Auth profile and, when it holds,
 * names the SPIFFE ID its key is registered for. Order: shape, key, time, coverage, the
 * signature itself, and only then the nonce, so nobody without the key can burn an agent's
 * nonces. The signature base is built by http-message-signatures; the structured fields are
 * read with structured-headers. Time is judged here on the injectable clock (the library's
 * own checks read Date.now()).
 */
export async function verifySignature(m: SignedMessage, o: SignatureOptions): Promise<SignatureVerdict> {
  const picked = selectSignature(m);
  if ('failure' in picked) return picked.failure;
  const [items, rawParams] = picked.input;
  const params = readParams(rawParams);
  if (typeof params === 'string') return fail('malformed', params);

  const key = o.keys.get(params.keyid);
  if (!key) return fail('unknown-key', `no key with keyid ${params.keyid.slice(0, 64)} is registered`);
  if (params.alg !== undefined && params.alg !== key.alg)
    return fail(
      'unsupported-algorithm',
      `alg ${params.alg.slice(0, 32)} is not the registered key's ${key.alg}`,
    );

  const now = o.clock.now() / 1000;
  if (params.expires <= params.created) return fail('malformed', 'expires is not after created');
  if (params.created > now + o.skewSeconds) return fail('not-yet-valid', 'created lies in the future');
  if (params.expires - params.created > o.maxValiditySeconds)
    return fail('validity-too-long', `expires is more than ${o.maxValiditySeconds} s after created`);
  if (now > params.expires + o.skewSeconds) return fail('expired', 'the signature has expired');

  const covered: string[] = [];
  for (const [name] of items) {
    if (typeof name !== 'string') return fail('malformed', 'a covered component is not a string');
    if (covered.includes(name)) return fail('malformed', `${name.slice(0, 64)} is covered twice`);
    covered.push(name);
  }
  const missing = requiredComponents(m).filter((c) => !covered.includes(c));
  if (missing.length > 0)
    return fail('missing-component', `the signature does not cover ${missing.join(', ')}`);

  const agent = one(m.headers['signature-agent']);
  if (agent !== undefined && !validSignatureAgent(agent))
    return fail('malformed', 'Signature-Agent is neither a string nor a dictionary of strings');

  let digest: ExpectedDigest | undefined;
  if (hasBody(m)) {
    const d = parseContentDigest(one(m.headers['content-digest']) ?? '');
    if (!d.ok) return fail('content-digest', d.reason);
    digest = d.expected;
  }

  let base: string;
  try {
    const headers = Object.fromEntries(
      Object.entries(m.headers).filter((e): e is [string, string | string[]] => e[1] !== undefined),
    );
    const request = {
      method: m.method,
      url: `${m.scheme}://${m.headers.host ?? 'invalid'}${m.target}`,
      headers,
    };
    const fields = items.map((item) => serializeItem(item));
    const signatureBase = httpbis.createSignatureBase({ fields, componentParser: componentsOf(m) }, request);
    signatureBase.push(['"@signature-params"', [serializeList([picked.input])]]);
    base = httpbis.formatSignatureBase(signatureBase);
  } catch (err) {
    return fail(
      'missing-component',
      `a covered component cannot be read (${String((err as Error).message).slice(0, 120)})`,
    );
  }
  let valid = false;
  try {
    valid = (await key.verify(Buffer.from(base), picked.signature)) === true;
  } catch {
    valid = false;
  }
  if (!valid) return fail('invalid-signature', 'the signature does not verify');

  const fresh = await o.nonces.remember(
    key.keyid,
    params.nonce,
    (params.expires + o.skewSeconds) * 1000,
    o.clock.now(),
  );
  if (!fresh) return fail('replayed-nonce', 'this nonce was already used (a replayed request)');
  return { ok: true, spiffeId: key.spiffeId, keyid: key.keyid, digest };
}

/**
 * Signature-Agent names the agent's key directory: a string item (early drafts) or a dictionary
 * of strings keyed by signature label (later drafts). Keys here are registered, not fetched, so
 * the value is only checked for shape and bound by the signature.
 */
export function validSignatureAgent(value: string): boolean {
  try {
    const item = parseItem(value);
    return typeof item[0] === 'string';
  } catch {
    try {
      return [...parseDictionary(value).values()].every((v) => typeof v[0] === 'string');
    } catch {
      return false;
    }
  }
}
