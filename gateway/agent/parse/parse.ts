import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyMatches } from '../../../lib/http-signature/digest.ts';
import { formatJsonPath } from '../../../lib/json/json-path.ts';
import { parseStrictJson } from '../../../lib/json/strict-json.ts';
import {
  hasLoneSurrogate,
  stringPath,
  UNSTORABLE,
  writesSurrogateEscape,
} from '../../../lib/json/well-formed.ts';
import { Problem, sendProblem } from '../../../lib/problem.ts';
import {
  contentTooLarge,
  malformedBody,
  unexpectedBody,
  unsupportedMediaType,
  unverifiedIdentity,
} from '../problems.ts';
import { isJsonMediaType } from './media-type.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function refuse(req: FastifyRequest, reply: FastifyReply, p: Problem) {
  req.agent.contractError = true;
  req.agent.reason = `parse: ${p.body.detail}`;
  return sendProblem(reply, p, req.url);
}

/**
 * Step 5, media type and announced size (preParsing, before a byte of the body is read):
 * 415 unless application/json; 413 when Content-Length already exceeds the limit.
 */
export function mediaTypeStep(limit: number) {
  return async function mediaType(req: FastifyRequest, reply: FastifyReply) {
    if (!isJsonMediaType(req.headers['content-type'])) return refuse(req, reply, unsupportedMediaType());
    const length = Number(req.headers['content-length']);
    if (length > limit) return refuse(req, reply, contentTooLarge(limit));
  };
}

/** A body that did not parse; refused by requireJson (a parser error would close the connection). */
class ParseFailure {
  constructor(readonly reason: string) {}
}

/** A body other than the one the verified signature's Content-Digest covered. */
class UnsignedBody {}

const EMPTY = Buffer.alloc(0);

/**
 * A signed request's body must be the bytes its Content-Digest names, checked on exactly the
 * buffer the strict parser reads. Refused 401 (the identity is not proven for this body) and
 * not counted as a contract error: the block punishes an agent's own bad bodies, and bytes
 * the agent did not sign are not its own (counting them would let whoever alters a request in
 * transit get an agent blocked). Later steps already ran on the identity; the audit entry
 * records none.
 */
function refuseUnsignedBody(req: FastifyRequest, reply: FastifyReply) {
  const reason = 'HTTP message signature: the body does not match the signed Content-Digest';
  req.agent.reason = `identity: ${reason}`;
  req.agent.identity = undefined;
  req.agent.identitySource = undefined;
  return sendProblem(reply, unverifiedIdentity(reason, 'content-digest-mismatch'), req.url);
}

function signedBodyMismatch(req: FastifyRequest, body: Buffer): boolean {
  const signed = req.agent?.signedDigest;
  if (!signed) return false;
  signed.checked = true;
  return !bodyMatches(signed.expected, body);
}

/**
 * Step 5, the body itself: read up to the route's bodyLimit (Fastify answers 413 beyond it,
 * mapped by the error handler), then UTF-8 and strict JSON. Registered as the only
 * content-type parser of the agent routes.
 */
export function registerStrictJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    if (signedBodyMismatch(req, body)) {
      done(null, new UnsignedBody());
      return;
    }
    // No bytes is no body, whatever the Content-Type says (many clients always send
    // application/json): requireJson refuses it as empty, optionalJson reads it as `{}`.
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      done(null, new ParseFailure('the body is not valid UTF-8'));
      return;
    }
    const r = parseStrictJson(text);
    if (!r.ok) {
      done(null, new ParseFailure(r.reason));
      return;
    }
    const unstorable = unstorableText(text, r.value);
    done(null, unstorable ? new ParseFailure(unstorable) : r.value);
  });
}

/**
 * A lone surrogate in a string or member name (`"\ud800"`, a high half without its low one): no
 * Unicode text. I-JSON (RFC 7493 §2.1) forbids it, UTF-8 cannot write it, and a store would keep
 * it altered (node-postgres sends U+FFFD) or refuse it (PostgreSQL's jsonb); so the body is
 * refused as malformed, in each protocol's error body, before any step stores a byte of it.
 * U+0000 is not refused here: the /v2 contract (the spec's) takes any string as `agent_id`, and
 * such an order is placed (test/procurement/fuzz.test.ts's model). JSON writes a lone surrogate only as an
 * escape, so the value is walked only when the text writes one (lib/json/well-formed.ts). The
 * place is named as a JSONPath, whose writer escapes a lone surrogate, so the answer and the
 * audit's reason are text.
 */
function unstorableText(text: string, value: unknown): string | undefined {
  // The text came through a fatal UTF-8 decoder, so it holds none raw: only an escape writes one.
  const lone = writesSurrogateEscape(text) ? stringPath(value, hasLoneSurrogate) : undefined;
  return lone ? `the string at ${formatJsonPath(lone)} ${UNSTORABLE.loneSurrogate}` : undefined;
}

/**
 * Step 5, verdict (first preValidation hook): 401 for a body its signature does not cover
 * (an absent body, which the parser never sees, is checked as empty), 400 for an empty or
 * unparsable body.
 */
export async function requireJson(req: FastifyRequest, reply: FastifyReply) {
  if (req.body instanceof UnsignedBody) return refuseUnsignedBody(req, reply);
  if (req.agent.signedDigest && !req.agent.signedDigest.checked && signedBodyMismatch(req, EMPTY))
    return refuseUnsignedBody(req, reply);
  if (req.body === undefined) return refuse(req, reply, malformedBody('the body is empty'));
  if (req.body instanceof ParseFailure) return refuse(req, reply, malformedBody(req.body.reason));
}

/**
 * For routes whose body may be absent (the checkout protocols' cancel): no body skips the media
 * type check; a body present is checked as on any other route.
 */
export function optionalBodyMediaType(limit: number) {
  const check = mediaTypeStep(limit);
  return async function mediaType(req: FastifyRequest, reply: FastifyReply) {
    const length = req.headers['content-length'];
    if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) return;
    return check(req, reply);
  };
}

/** requireJson for a body that may be absent: an absent one reads as `{}`. */
export async function optionalJson(req: FastifyRequest, reply: FastifyReply) {
  if (req.body === undefined) {
    req.body = {};
    return;
  }
  return requireJson(req, reply);
}

function withContractFlag(req: FastifyRequest, p: Problem): Problem {
  req.agent.contractError = true;
  req.agent.reason = `parse: ${p.body.detail}`;
  return p;
}

/** Fastify's own parsing errors (size beyond bodyLimit, bad Content-Length) as problems. */
export function parseErrorProblem(
  req: FastifyRequest,
  err: { code?: string; statusCode?: number },
  limit: number,
) {
  if (err instanceof Problem) return err;
  let p: Problem | undefined;
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') p = contentTooLarge(limit);
  else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') p = unsupportedMediaType();
  else if (
    err.code?.startsWith('FST_ERR_CTP_') ||
    (err.statusCode && err.statusCode >= 400 && err.statusCode < 500)
  )
    p = malformedBody('the body could not be read');
  if (p && req.agent) withContractFlag(req, p);
  return p;
}

/**
 * Step 5–6 of a request without fields (cancel): no body, or one that parses to `{}`. An
 * unparsable body is 400, any field 422 (unknown fields are refused, as everywhere).
 */
export async function requireNoFields(req: FastifyRequest, reply: FastifyReply) {
  const body = req.body;
  if (body === undefined) return;
  if (body instanceof ParseFailure) return refuse(req, reply, malformedBody(body.reason));
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (isObject && Object.keys(body).length === 0) return;
  const errors = isObject
    ? Object.keys(body).map((k) => ({
        pointer: `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        message: 'is not a field of this request',
      }))
    : [{ pointer: '', message: 'must be an empty object' }];
  req.agent.reason = `contract: ${errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')}`;
  return sendProblem(reply, unexpectedBody(errors), req.url);
}
