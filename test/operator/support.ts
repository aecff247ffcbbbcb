/** Helpers for the operator API tests: requests with a token, problem checks, polling. */
import { expect } from 'vitest';
import { operatorContract } from '../../gateway/operator/contract.ts';
import { post, validOrder } from '../procurement/support/agent.ts';

export interface OpReply {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: replies are checked against the document's schemas
  json: any;
}

export async function op(
  baseUrl: string,
  path: string,
  opts: { token?: string; method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<OpReply> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: opts.method ?? 'GET',
    headers: {
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

export function expectProblem(r: OpReply, status: number, type?: string): void {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.json.status).toBe(status);
  expect(operatorContract().reply('Problem')(r.json), r.text).toBe(true);
  if (type) expect(String(r.json.type)).toMatch(new RegExp(`/${type}$`));
}

export function expectReply(r: OpReply, schema: Parameters<ReturnType<typeof operatorContract>['reply']>[0]) {
  expect(r.status, r.text).toBe(200);
  const validate = operatorContract().reply(schema);
  expect(validate(r.json), JSON.stringify(validate.errors)).toBe(true);
}

/** Audit entries and activity are written after the response: poll until the condition holds. */
export async function eventually<T>(
  read: () => Promise<T>,
  holds: (v: T) => boolean,
  tries = 200,
): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !holds(v); i++) {
    await new Promise((r) => setTimeout(r, 25));
    v = await read();
  }
  return v;
}

/** Six bodies that break the contract: the sixth blocks the identity (spec: more than 5). */
export async function blockAgent(baseUrl: string | (() => string), spiffe: string): Promise<void> {
  for (let i = 0; i < 6; i++) {
    const url = typeof baseUrl === 'string' ? baseUrl : baseUrl();
    const r = await post(url, { spiffe, body: JSON.stringify(validOrder({ quantity: 0 })) });
    expect(r.status, r.text).toBe(422);
  }
}
