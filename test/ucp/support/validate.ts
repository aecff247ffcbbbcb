import {
  type UcpDef,
  type UcpOperation,
  type UcpViolation,
  ucpValidator,
} from '../../../gateway/agent/ucp/schema/index.ts';

/** The violations as lines an assertion message can show (`$.totals[0].amount: must be integer (type)`). */
export function describeUcpViolations(violations: readonly UcpViolation[]): string {
  return violations.map((v) => `  ${v.param}: ${v.message} (${v.keyword})`).join('\n');
}

/**
 * Throws unless `value` is a valid UCP `def`, listing every violation. Responses (the default)
 * are judged by the released schemas; a request names its operation (`{ request: 'create' }`),
 * whose view of the annotated schemas it is judged by.
 */
export function expectUcp(
  def: UcpDef,
  value: unknown,
  side: 'response' | { request: UcpOperation } = 'response',
): void {
  const validate =
    side === 'response' ? ucpValidator(def, 'response') : ucpValidator(def, 'request', side.request);
  const violations = validate(value);
  if (violations.length > 0) {
    const what = side === 'response' ? 'response' : `${side.request} request`;
    throw new Error(
      `not a valid UCP ${def} (${what}): ${violations.length} violation(s)\n${describeUcpViolations(violations)}`,
    );
  }
}
