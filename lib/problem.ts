/**
 * RFC 9457 problem details: the gateway's one error body. Errors are values with a type;
 * they are mapped to HTTP in one place (sendProblem).
 */
import type { FastifyReply } from 'fastify';

export const PROBLEM_BASE = 'https://agent-commerce.example/problems/';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

export class Problem extends Error {
  readonly body: ProblemDetails;
  readonly headers: Record<string, string>;
  constructor(
    status: number,
    slug: string,
    title: string,
    detail: string,
    extensions: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.body = { type: PROBLEM_BASE + slug, title, status, detail, ...extensions };
    this.headers = headers;
  }
  get status(): number {
    return this.body.status;
  }
}

/** The longest `instance` a problem carries (the documents' Problem schema says so). */
export const MAX_INSTANCE = 256;

/**
 * The request's URL as the problem's instance: without its query when the whole is longer than
 * MAX_INSTANCE (a 300-character search), cut when even the path is.
 */
export function instanceOf(url: string): string {
  if (url.length <= MAX_INSTANCE) return url;
  const path = url.split('?')[0] ?? '';
  return path.slice(0, MAX_INSTANCE);
}

export function sendProblem(reply: FastifyReply, problem: Problem, instance?: string): FastifyReply {
  const body = instance ? { ...problem.body, instance: instanceOf(instance) } : problem.body;
  return reply.code(problem.status).headers(problem.headers).type('application/problem+json').send(body);
}
