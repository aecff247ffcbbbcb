/**
 * The console's only way to the system: the public REST endpoints and /graphql, with the
 * operator's own bearer token. A refusal is the API's: its problem detail (or GraphQL error)
 * is carried to the page as is, never replaced by a check of the page's own.
 */
import { session } from './session.ts';

export interface FieldError {
  pointer: string;
  message: string;
}

/** An RFC 9457 problem (or a GraphQL error, or a network failure) in words for the page. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code?: string,
    readonly type?: string,
    /** The API's violations with a JSON pointer each (BAD_USER_INPUT's extensions.errors). */
    readonly fieldErrors: readonly FieldError[] = [],
  ) {
    super(detail || title);
  }
}

export interface ApiReply<T> {
  data: T;
  headers: Headers;
  status: number;
}

function authHeaders(): Record<string, string> {
  const token = session.token();
  return token ? { authorization: `Bearer ${token}` } : {};
}

async function problemOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const detail = String(body.detail ?? body.error ?? body.message ?? '');
    const errors = Array.isArray(body.errors)
      ? (body.errors as { pointer?: string; message?: string }[])
          .map((e) => `${e.pointer ?? ''} ${e.message ?? ''}`.trim())
          .join('; ')
      : '';
    return new ApiError(
      res.status,
      String(body.title ?? res.statusText ?? `HTTP ${res.status}`),
      [detail, errors].filter(Boolean).join(' — '),
      typeof body.code === 'string' ? body.code : undefined,
      typeof body.type === 'string' ? body.type : undefined,
    );
  } catch {
    return new ApiError(res.status, res.statusText || `HTTP ${res.status}`, text.slice(0, 300));
  }
}

async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, 'The gateway did not answer', err instanceof Error ? err.message : String(err));
  }
}

/** A REST call; a non-2xx answer throws the API's problem. */
export async function rest<T>(
  path: string,
  opts: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<ApiReply<T>> {
  const res = await send(path, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers: {
      accept: 'application/json, application/problem+json',
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...authHeaders(),
    },
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  if (!res.ok) throw await problemOf(res);
  const data = (res.status === 204 ? null : await res.json()) as T;
  return { data, headers: res.headers, status: res.status };
}

/** The raw text of a GET (the Prometheus exposition of /metrics). */
export async function text(path: string, signal?: AbortSignal): Promise<string> {
  const res = await send(path, { headers: authHeaders(), ...(signal ? { signal } : {}) });
  if (!res.ok) throw await problemOf(res);
  return res.text();
}

export interface GraphQLError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; [k: string]: unknown };
}

/** The full GraphQL answer, errors included (the explorer shows it as it came). */
export async function graphqlRaw(
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; body: { data?: unknown; errors?: GraphQLError[] } }> {
  const res = await send('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...authHeaders() },
    body: JSON.stringify({ query, variables }),
  });
  const raw = await res.text();
  try {
    return { status: res.status, body: JSON.parse(raw) };
  } catch {
    throw new ApiError(res.status, res.statusText || `HTTP ${res.status}`, raw.slice(0, 300));
  }
}

const GRAPHQL_STATUS: Record<string, number> = { UNAUTHENTICATED: 401, FORBIDDEN: 403 };

/** A GraphQL call for a page: its first error (FORBIDDEN, BAD_USER_INPUT, …) throws. */
export async function graphql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const { status, body } = await graphqlRaw(query, variables);
  const first = body.errors?.[0];
  if (first) {
    const code = first.extensions?.code;
    // A list of violations (extensions.errors), or one naming its argument (extensions.field).
    const ext = first.extensions ?? {};
    const fieldErrors = Array.isArray(ext.errors)
      ? (ext.errors as FieldError[])
      : typeof ext.field === 'string'
        ? [{ pointer: `/${ext.field}`, message: first.message }]
        : [];
    throw new ApiError(
      (code && GRAPHQL_STATUS[code]) || (status >= 400 ? status : 400),
      code ?? 'GraphQL error',
      first.message,
      code,
      undefined,
      fieldErrors,
    );
  }
  return body.data as T;
}
