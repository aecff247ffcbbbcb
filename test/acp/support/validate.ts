import {
  type AcpDef,
  type AcpViolation,
  acpRequestValidator,
  acpResponseValidator,
} from '../../../gateway/agent/acp/schema/index.ts';

/** The violations as lines an assertion message can show (`$.buyer.email: must match format "email" (format)`). */
export function describeViolations(violations: readonly AcpViolation[]): string {
  return violations.map((v) => `  ${v.param}: ${v.message} (${v.keyword})`).join('\n');
}

/**
 * Throws unless `value` is a valid ACP `def`, listing every violation. Responses (the default)
 * are judged by the released bundle with its quirks fixed; `side: 'request'` adds what this
 * merchant tolerates in requests (Item.quantity).
 */
export function expectAcp(def: AcpDef, value: unknown, side: 'request' | 'response' = 'response'): void {
  const violations = (side === 'request' ? acpRequestValidator(def) : acpResponseValidator(def))(value);
  if (violations.length > 0) {
    throw new Error(
      `not a valid ACP ${def} (${side}): ${violations.length} violation(s)\n${describeViolations(violations)}`,
    );
  }
}
