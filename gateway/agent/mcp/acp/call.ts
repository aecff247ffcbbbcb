import { stringifyExact } from '../../../../lib/json/exact-stringify.ts';
import type { AcpErrorBody } from '../../acp/errors.ts';
import type { AcpTool } from './tools.ts';

/**
 * The binding's mapping, both ways, as pure functions: tool arguments `{meta, id, payload}` →
 * the ACP REST request (meta fields → headers, id → path, payload → body), and the route's
 * reply → the session, or ACP's Error for the JSON-RPC error.
 */

/** meta field → the HTTP header it stands for (the binding's header table). */
export const META_HEADERS: Readonly<Record<string, string>> = {
  api_version: 'api-version',
  idempotency_key: 'idempotency-key',
  request_id: 'request-id',
  user_agent: 'user-agent',
  accept_language: 'accept-language',
  signature: 'signature',
  timestamp: 'timestamp',
};

/** What an HTTP field value may hold (RFC 9110 §5.5, without obs-text): visible ASCII, SP, HTAB. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;

export interface AcpHttpCall {
  readonly method: 'GET' | 'POST';
  /** Path under the ACP base path, the session id percent-encoded as one segment. */
  readonly path: string;
  readonly headers: Record<string, string>;
  /** The body as JSON text, numbers as the agent wrote them; absent when the tool sends none. */
  readonly payload?: string;
}

/** Arguments the binding's structure cannot carry: JSON-RPC's Invalid params (-32602). */
export type AcpCallVerdict = { ok: true; call: AcpHttpCall } | { ok: false; message: string };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const invalid = (message: string): AcpCallVerdict => ({ ok: false, message });

/**
 * The REST request a tool call stands for. Only the structure is judged here (`meta` an object
 * whose known fields are header values, `id` a string, `payload` an object, nothing else): what
 * the values mean (API-Version, Idempotency-Key, the body against the bundle) is the route's to
 * judge, so a tool call gets the REST answer. Unknown meta fields are ignored, as the binding asks.
 */
export function acpHttpCall(tool: AcpTool, args: unknown): AcpCallVerdict {
  if (!isRecord(args)) return invalid('The arguments must be an object {meta, id, payload}.');
  const allowed = new Set([
    'meta',
    ...(tool.args.id ? ['id'] : []),
    ...(tool.args.payload ? ['payload'] : []),
  ]);
  const extra = Object.keys(args).find((k) => !allowed.has(k));
  if (extra !== undefined)
    return invalid(`${tool.name} takes no argument ${JSON.stringify(extra.slice(0, 64))}.`);

  const meta = args.meta;
  if (!isRecord(meta)) return invalid('meta is required and must be an object.');
  const headers: Record<string, string> = {};
  for (const [field, header] of Object.entries(META_HEADERS)) {
    const v = meta[field];
    if (v === undefined) continue;
    if (typeof v !== 'string') return invalid(`meta.${field} must be a string.`);
    if (!FIELD_VALUE.test(v)) return invalid(`meta.${field} holds characters no ${header} header can carry.`);
    headers[header] = v;
  }

  let path = tool.path;
  if (tool.args.id) {
    if (typeof args.id !== 'string' || args.id === '') return invalid('id is required and must be a string.');
    // One path segment whatever it holds: an id can never name another route.
    path = path.replace('{id}', encodeURIComponent(args.id));
  }

  const body = args.payload;
  if (tool.args.payload && body === undefined && tool.args.payloadRequired)
    return invalid('payload is required and must be an object.');
  if (body !== undefined && !isRecord(body)) return invalid('payload must be an object.');
  return {
    ok: true,
    call: {
      method: tool.method,
      path,
      headers,
      ...(body !== undefined ? { payload: stringifyExact(body) } : {}),
    },
  };
}

export interface RouteReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: string;
}

/** The HTTP facts of a success that its body does not say (`_meta`, as for the /v2 tools). */
export interface AcpHttpFacts {
  readonly status: number;
  readonly location?: string;
  readonly request_id?: string;
  readonly idempotent_replayed?: true;
}

export type AcpOutcome =
  | {
      readonly ok: true;
      readonly session: Record<string, unknown>;
      readonly text: string;
      readonly http: AcpHttpFacts;
    }
  | { readonly ok: false; readonly error: AcpErrorBody };

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * JSONPath into the REST body → into the tool arguments, where the body is `payload`
 * (`$.currency` → `$.payload.currency`, as the binding's error_invalid_request example has it).
 */
export const paramInArguments = (param: string): string =>
  param === '$' || param.startsWith('$.') || param.startsWith('$[') ? `$.payload${param.slice(1)}` : param;

const UNREADABLE: AcpErrorBody = {
  type: 'processing_error',
  code: 'invalid_reply',
  message: 'The merchant answered with something that is not an ACP object.',
};

/** The route's reply as the binding's result: the session (2xx), else ACP's Error. */
export function acpOutcome(reply: RouteReply): AcpOutcome {
  const json = parse(reply.body);
  const header = (name: string) => {
    const v = reply.headers[name];
    return typeof v === 'string' ? v : undefined;
  };
  if (reply.status >= 200 && reply.status < 300) {
    if (!isRecord(json)) return { ok: false, error: UNREADABLE };
    const location = header('location');
    const requestId = header('request-id');
    return {
      ok: true,
      session: json,
      text: reply.body,
      http: {
        status: reply.status,
        ...(location ? { location } : {}),
        ...(requestId ? { request_id: requestId } : {}),
        ...(header('idempotent-replayed') === 'true' ? { idempotent_replayed: true as const } : {}),
      },
    };
  }
  if (!isRecord(json) || typeof json.type !== 'string' || typeof json.message !== 'string')
    return { ok: false, error: UNREADABLE };
  const error = json as unknown as AcpErrorBody;
  return {
    ok: false,
    error: typeof error.param === 'string' ? { ...error, param: paramInArguments(error.param) } : error,
  };
}
