/** Helpers of the demand-control tests: raw GraphQL-over-HTTP calls and token counts. */
import { createHash } from 'node:crypto';
import { Lexer, Source, TokenKind } from 'graphql';

export interface Answer {
  status: number;
  data?: Record<string, unknown> | null;
  errors?: {
    message: string;
    locations?: { line: number; column: number }[];
    extensions?: { code?: string };
  }[];
}

/** POSTs a JSON body (anything: a batch, an APQ request) to /graphql. */
export async function post(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, ...((await res.json()) as object) };
}

/** GET /graphql with these parameters (Apollo's CSRF prevention wants a preflight header). */
export async function get(baseUrl: string, params: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${baseUrl}/graphql?${new URLSearchParams(params)}`, {
    headers: { 'apollo-require-preflight': 'true' },
  });
  return { status: res.status, ...((await res.json()) as object) };
}

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

/** Lexical tokens of a document, counted by graphql-js's lexer (independently of the parser's limit). */
export function tokenCount(document: string): number {
  const lexer = new Lexer(new Source(document));
  let n = 0;
  while (lexer.advance().kind !== TokenKind.EOF) n++;
  return n;
}

export const codeOf = (a: Answer): string | undefined => a.errors?.[0]?.extensions?.code;
