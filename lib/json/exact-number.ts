import type { ErrorObject, FuncKeywordDefinition, SchemaValidateFunction } from 'ajv';
import { Decimal } from 'decimal.js';
import { numberLexeme } from './strict-json.ts';

/**
 * Exact decimal values of JSON numbers. A JSON number parsed by the strict parser keeps its
 * text, so `5000.00000000000000001` is judged as written, not as the double 5000 it rounds to.
 * A number made in process (no text) is its shortest round-trip decimal, `String(n)`: what
 * JSON.stringify would write for it, so a value built in a test means what it shows.
 *
 * decimal.js holds a parsed value exactly (precision only rounds arithmetic results, which
 * this module does not use except through integer BigInts); the strict parser bounds the
 * magnitude to the double range, so every value here is finite with at most a few thousand
 * digits.
 */
const Exact = Decimal.clone();
export type ExactDecimal = Decimal;

/** The exact value of `container[key]`: its JSON text when a strict parse made it. */
export function exactNumber(container: unknown, key: string | number, value: number): ExactDecimal {
  const lexeme = numberLexeme(container, key);
  // A lexeme that no longer matches the value (the object was changed after parsing) is stale.
  return new Exact(lexeme !== undefined && Number(lexeme) === value ? lexeme : String(value));
}

/** Plain decimal text without exponent or trailing zeros: 1e3 → "1000", 250.50 → "250.5". */
export const plainText = (d: ExactDecimal): string => (d.isZero() ? '0' : d.toFixed());

/**
 * The exact value of `container[key]` as plain decimal text (no exponent), for code that reads
 * amounts from text (`"19.90"` → `"19.9"`, `1e1` → `"10"`); strings pass through unchanged.
 */
export function exactText<T>(container: unknown, key: string | number, value: T): T | string {
  return typeof value === 'number' && Number.isFinite(value)
    ? plainText(exactNumber(container, key, value))
    : value;
}

/** Whether `value` is an integer multiple of `step` (both exact; step > 0), in BigInt. */
export function isMultipleOf(value: ExactDecimal, step: ExactDecimal): boolean {
  const places = Math.max(value.decimalPlaces(), step.decimalPlaces());
  // toFixed with at least as many places as either has is exact (no rounding happens).
  const scaled = (d: ExactDecimal) => BigInt(d.toFixed(places).replace('.', ''));
  const s = scaled(step);
  return s !== 0n && scaled(value) % s === 0n;
}

/** Decimal places a power-of-ten step allows (0.01 → 2), or undefined for another step. */
function placesOfStep(step: ExactDecimal): number | undefined {
  const places = step.decimalPlaces();
  return places > 0 && step.equals(new Exact(10).pow(-places)) ? places : undefined;
}

type Comparison = { readonly keyword: string; readonly op: string; readonly holds: (c: number) => boolean };

const COMPARISONS: readonly Comparison[] = [
  { keyword: 'maximum', op: '<=', holds: (c) => c <= 0 },
  { keyword: 'minimum', op: '>=', holds: (c) => c >= 0 },
  { keyword: 'exclusiveMaximum', op: '<', holds: (c) => c < 0 },
  { keyword: 'exclusiveMinimum', op: '>', holds: (c) => c > 0 },
];

type DataCxt = Parameters<SchemaValidateFunction>[3];
/** What this module needs of an Ajv instance (any draft's class). */
type AjvKeywords = {
  removeKeyword(keyword: string): unknown;
  addKeyword(definition: FuncKeywordDefinition): unknown;
};

const exactValueOf = (data: number, cxt: DataCxt) =>
  exactNumber(cxt?.parentData, cxt?.parentDataProperty ?? '', data);

function failing(validate: SchemaValidateFunction, error: Partial<ErrorObject>): false {
  validate.errors = [error];
  return false;
}

/**
 * Replaces Ajv's numeric keywords (maximum, minimum, exclusiveMaximum, exclusiveMinimum,
 * multipleOf) by exact ones: the comparison is made on the number's decimal value, never on
 * binary floating point (Ajv's own multipleOf even needs a tolerance for 0.07 / 0.01). The
 * schema document stays standard JSON Schema; only the arithmetic changes. Messages keep
 * Ajv's wording.
 */
export function useExactNumberKeywords<A extends AjvKeywords>(ajv: A): A {
  for (const { keyword, op, holds } of COMPARISONS) {
    ajv.removeKeyword(keyword);
    const validate: SchemaValidateFunction = (limit: number, data: number, _schema, cxt) =>
      holds(exactValueOf(data, cxt).cmp(String(limit))) ||
      failing(validate, { keyword, params: { comparison: op, limit }, message: `must be ${op} ${limit}` });
    ajv.addKeyword({ keyword, type: 'number', schemaType: 'number', errors: true, validate });
  }
  ajv.removeKeyword('multipleOf');
  const multipleOf: SchemaValidateFunction = (step: number, data: number, _schema, cxt) => {
    const exactStep = new Exact(String(step));
    if (isMultipleOf(exactValueOf(data, cxt), exactStep)) return true;
    const places = placesOfStep(exactStep);
    return failing(multipleOf, {
      keyword: 'multipleOf',
      params: { multipleOf: step },
      message:
        places === undefined
          ? `must be a multiple of ${step}`
          : `must have at most ${places} decimal place${places === 1 ? '' : 's'}`,
    });
  };
  ajv.addKeyword({
    keyword: 'multipleOf',
    type: 'number',
    schemaType: 'number',
    errors: true,
    validate: multipleOf,
  });
  return ajv;
}
