import type { ErrorObject } from 'ajv';
import { formatJsonPath, type PathSegment, pointerSegments } from '../../../../lib/json/json-path.ts';

/** One way an ACP document fails its schema, located as ACP's `Error.param` is. */
export interface AcpViolation {
  /** RFC 9535 JSONPath into the document: `$.line_items[0].quantity`, `$['odd key']`. */
  readonly param: string;
  readonly message: string;
  /** The JSON Schema keyword that failed (`type`, `required`, `additionalProperties`, …). */
  readonly keyword: string;
}

/** The property an object-level error is about: Ajv reports it on the parent object. */
function namedProperty(e: ErrorObject): string | undefined {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return String(p.missingProperty);
    case 'additionalProperties':
      return String(p.additionalProperty);
    case 'unevaluatedProperties':
      return String(p.unevaluatedProperty);
    default:
      return undefined;
  }
}

function messageOf(e: ErrorObject): string {
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not allowed';
    case 'enum':
      return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}

/** One Ajv error as a violation; `document` is the value that was validated. */
export function acpViolationOf(e: ErrorObject, document: unknown): AcpViolation {
  const at: PathSegment[] = pointerSegments(e.instancePath, document);
  const property = namedProperty(e);
  if (property !== undefined) at.push(property);
  return { param: formatJsonPath(at), message: messageOf(e), keyword: e.keyword };
}

/** Ajv's errors as violations, each distinct one once, in Ajv's order. */
export function acpViolations(errors: readonly ErrorObject[], document: unknown): AcpViolation[] {
  const distinct = new Map<string, AcpViolation>();
  for (const e of errors) {
    const v = acpViolationOf(e, document);
    distinct.set(`${v.param}\u0000${v.keyword}\u0000${v.message}`, v);
  }
  return [...distinct.values()];
}
