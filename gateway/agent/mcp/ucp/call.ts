import { stringifyExact } from '../../../../lib/json/exact-stringify.ts';
import type { UcpTool } from './tools.ts';

/**
 * The binding's mapping, both ways, as pure functions: tool arguments `{meta, id, checkout}` (or
 * `{meta, catalog}`) →
 * the UCP REST request (`meta["ucp-agent"].profile` → `UCP-Agent: profile="…"`,
 * `meta["idempotency-key"]` → `Idempotency-Key`, id → path, checkout → body), and the route's
 * reply → the tool result (a checkout or an error_response: business outcomes, HTTP 200/201) or
 * a JSON-RPC error (protocol errors: the REST status says which; checkout-mcp.md "Error Handling").
 */

export interface UcpHttpCall {
  readonly method: 'GET' | 'POST' | 'PUT';
  /** Path under the UCP base path, the checkout id percent-encoded as one segment. */
  readonly path: string;
  readonly headers: Record<string, string>;
  /** The body as JSON text, numbers as the agent wrote them; absent when the tool sends none. */
  readonly payload?: string;
}

export type UcpCallVerdict = { ok: true; call: UcpHttpCall } | { ok: false; message: string };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (message: string): UcpCallVerdict => ({ ok: false, message });
/** What an HTTP field value may hold (RFC 9110 §5.5, without obs-text). */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;

/** An RFC 8941 string: `"` and `\` escaped; anything outside visible ASCII refused by the caller. */
const sfString = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * The REST request a tool call stands for. Only the structure is judged here: what the values
 * mean (the profile URL and its fetch, the body against the release) is the route's to judge,
 * so a tool call gets the REST answer. Unknown meta fields are ignored ("Platforms MAY include
 * additional metadata fields").
 */
export function ucpHttpCall(tool: UcpTool, args: unknown): UcpCallVerdict {
  if (!isRecord(args))
    return invalid(
      `The arguments must be an object {meta${tool.id ? ', id' : ''}${tool.body ? `, ${tool.body}` : ''}}.`,
    );
  const allowed = new Set(['meta', ...(tool.id ? ['id'] : []), ...(tool.body ? [tool.body] : [])]);
  const extra = Object.keys(args).find((k) => !allowed.has(k));
  if (extra !== undefined)
    return invalid(`${tool.name} takes no argument ${JSON.stringify(extra.slice(0, 64))}.`);
  const meta = args.meta;
  if (!isRecord(meta)) return invalid('meta is required and must be an object.');
  const agent = meta['ucp-agent'];
  const profile = isRecord(agent) ? agent.profile : undefined;
  if (typeof profile !== 'string' || profile === '')
    return invalid('meta["ucp-agent"].profile is required: the URL of your platform profile.');
  if (!FIELD_VALUE.test(profile))
    return invalid('meta["ucp-agent"].profile holds characters no header can carry.');
  const headers: Record<string, string> = { 'ucp-agent': `profile=${sfString(profile)}` };
  const key = meta['idempotency-key'];
  if (key !== undefined) {
    if (typeof key !== 'string' || !FIELD_VALUE.test(key))
      return invalid('meta["idempotency-key"] must be a string an HTTP header can carry.');
    headers['idempotency-key'] = key;
  } else if (tool.idempotencyRequired)
    return invalid(`meta["idempotency-key"] is required for ${tool.name}.`);

  let path = tool.path;
  if (tool.id) {
    if (typeof args.id !== 'string' || args.id === '') return invalid('id is required and must be a string.');
    path = path.replace('{id}', encodeURIComponent(args.id));
  }
  const body = tool.body ? args[tool.body] : undefined;
  if (tool.body) {
    if (!isRecord(body)) return invalid(`${tool.body} is required and must be an object.`);
    // checkout-mcp.md and cart-mcp.md: the object in the request payload MUST NOT contain an id.
    if (tool.id && 'id' in body)
      return invalid(`${tool.body} must not contain id: the ${tool.body} is named by the top-level id.`);
  }
  // The REST update of a cart carries its id in the body (cart.json: `id` required on update).
  const sent = tool.body === 'cart' && tool.id && isRecord(body) ? { ...body, id: args.id } : body;
  return {
    ok: true,
    call: {
      method: tool.method,
      path,
      headers,
      ...(tool.body ? { payload: stringifyExact(sent) } : {}),
    },
  };
}

export interface RouteReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: string;
}

/** JSON-RPC error codes: protocol errors -32000, discovery errors (the platform profile) -32001. */
export const UCP_PROTOCOL_ERROR = -32000;
export const UCP_DISCOVERY_ERROR = -32001;
/** The codes of overview.md's discovery and negotiation failures (the platform profile). */
const DISCOVERY = new Set([
  'invalid_profile_url',
  'profile_unreachable',
  'profile_malformed',
  'profile_not_trusted',
  'version_unsupported',
]);

export type UcpOutcome =
  | {
      readonly ok: true;
      readonly result: Record<string, unknown>;
      readonly text: string;
      readonly status: number;
    }
  | {
      readonly ok: false;
      readonly code: number;
      readonly message: string;
      readonly data: { code: string; content: string; [k: string]: unknown };
    };

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The route's reply as the binding's: the UCP object (2xx), else the JSON-RPC error with UCP's `{code, content}` as data. */
export function ucpOutcome(reply: RouteReply): UcpOutcome {
  const json = parse(reply.body);
  if (reply.status >= 200 && reply.status < 300 && isRecord(json))
    return { ok: true, result: json, text: reply.body, status: reply.status };
  const body =
    isRecord(json) && typeof json.code === 'string' && typeof json.content === 'string' ? json : undefined;
  const data = body
    ? (body as { code: string; content: string })
    : { code: 'invalid_reply', content: 'The business answered with something that is not a UCP object.' };
  return {
    ok: false,
    code: DISCOVERY.has(data.code) ? UCP_DISCOVERY_ERROR : UCP_PROTOCOL_ERROR,
    message: data.content,
    data: { ...data, status: reply.status },
  };
}
