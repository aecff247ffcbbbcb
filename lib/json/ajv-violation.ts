import type { ErrorObject } from 'ajv';

/** One reason a document failed its schema, located by a JSON pointer. */
export interface Violation {
  readonly pointer: string;
  readonly message: string;
}

/**
 * One Ajv error as a violation: an unknown or missing property is named in the pointer (Ajv
 * reports it on the parent object), anything else keeps Ajv's location and message. The
 * contracts that answer `errors[]` (edge, operator API, promotions) all read errors this way;
 * how they collect them (deduplicated, capped, a special case first) is theirs.
 */
export function violationOf(e: ErrorObject): Violation {
  if (e.keyword === 'additionalProperties') {
    const extra = String((e.params as { additionalProperty: string }).additionalProperty);
    return { pointer: `${e.instancePath}/${extra}`, message: 'is not allowed' };
  }
  if (e.keyword === 'required') {
    const missing = String((e.params as { missingProperty: string }).missingProperty);
    return { pointer: `${e.instancePath}/${missing}`, message: 'is required' };
  }
  return { pointer: e.instancePath || '/', message: e.message ?? 'is invalid' };
}

/** The errors as violations, each distinct pointer and message once, in Ajv's order. */
export function distinctViolations(
  errors: readonly ErrorObject[] | null | undefined,
  of: (e: ErrorObject) => Violation = violationOf,
): Violation[] {
  const out = new Map<string, Violation>();
  for (const e of errors ?? []) {
    const v = of(e);
    out.set(`${v.pointer} ${v.message}`, v);
  }
  return [...out.values()];
}
