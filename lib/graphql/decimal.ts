import {
  type DocumentNode,
  GraphQLError,
  GraphQLScalarType,
  Kind,
  type TypeNode,
  type ValueNode,
} from 'graphql';
import { type Money, money } from '../money.ts';

/**
 * The `Decimal` scalar: money as an exact decimal string, the way commerce GraphQL APIs carry it
 * (Shopify's `Decimal` in `MoneyV2`). A JSON number has already been through a double by the time
 * a resolver sees it, so variables must be strings; a literal is read from its source text
 * (`19.99` in a document is the text "19.99", never a double). Output is plain decimal notation,
 * no exponent, trailing zeros as the amount has them ("22.99", "1", "0.10").
 *
 * graphql-scalars has no exact decimal of this shape (its `BigInt`/`Currency` go through numbers),
 * so this one small scalar is written here over decimal.js.
 */
const DECIMAL_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?$/;
/** Long enough for any amount the services accept, short enough that parsing stays cheap. */
const MAX_DECIMAL_LENGTH = 40;

const badDecimal = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/** Parses an exact decimal string; throws `BAD_USER_INPUT` for anything else. */
export function parseDecimal(text: unknown): Money {
  if (typeof text !== 'string') {
    throw badDecimal(
      `Decimal takes a decimal string such as "19.99", not a ${text === null ? 'null' : typeof text} (a JSON number may already have lost cents)`,
    );
  }
  if (text.length > MAX_DECIMAL_LENGTH || !DECIMAL_TEXT.test(text)) {
    throw badDecimal(
      `Decimal takes a decimal string such as "19.99" (digits, an optional "-" and "."), got "${text.slice(0, 60)}"`,
    );
  }
  return money(text);
}

function parseLiteral(node: ValueNode): Money {
  // Int and Float literals are source text, so they are as exact as a string.
  if (node.kind === Kind.STRING || node.kind === Kind.INT || node.kind === Kind.FLOAT)
    return parseDecimal(node.value);
  throw badDecimal(`Decimal takes a decimal string such as "19.99", got a ${node.kind} literal`);
}

/** Plain decimal notation for any amount (decimal.js would use an exponent past 1e21 or below 1e-7). */
export function formatDecimal(value: unknown): string {
  // Amounts kept as text (an order's budget, a policy's) print as written: "101.00" stays so.
  if (typeof value === 'string') {
    if (value.length <= MAX_DECIMAL_LENGTH && DECIMAL_TEXT.test(value)) return value;
    throw new GraphQLError(`Decimal cannot represent "${value.slice(0, 60)}"`);
  }
  if (typeof value === 'number') {
    // A number reaching output is an amount the services already rounded; its shortest text is exact.
    if (!Number.isFinite(value)) throw new GraphQLError(`Decimal cannot represent ${value}`);
    // The hot path (every quoted line): String() is that shortest text, in plain notation
    // between 1e-7 and 1e21; only outside that range does it need decimal.js to drop the exponent.
    const abs = Math.abs(value);
    if (abs < 1e21 && (abs >= 1e-7 || abs === 0)) return String(value + 0); // + 0: -0 → "0"
    return money(value).toFixed();
  }
  if (value && typeof value === 'object' && 'toFixed' in value && typeof value.toFixed === 'function') {
    return (value as Money).toFixed();
  }
  throw new GraphQLError(`Decimal cannot represent ${String(value)}`);
}

export const DecimalScalar = new GraphQLScalarType<Money, string>({
  name: 'Decimal',
  description: 'An exact decimal amount as a string, e.g. "19.99". Never a binary floating-point number.',
  serialize: formatDecimal,
  parseValue: parseDecimal,
  parseLiteral,
});

/** Minor units by currency code: Intl.NumberFormat costs tens of microseconds to build. */
const unitsByCurrency = new Map<string, number>();

/**
 * ISO 4217 minor units of a currency (USD 2, JPY 0, BHD 3), from the runtime's ICU data instead
 * of a hand-kept table. An unknown code falls back to 2.
 */
export function minorUnits(currency: string): number {
  let units = unitsByCurrency.get(currency);
  if (units === undefined) {
    try {
      units =
        new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
          .maximumFractionDigits ?? 2;
    } catch {
      units = 2;
    }
    // Codes come from requests: remember a bounded number of them.
    if (unitsByCurrency.size < 1024) unitsByCurrency.set(currency, units);
  }
  return units;
}

const namedType = (t: TypeNode): string => (t.kind === Kind.NAMED_TYPE ? t.name.value : namedType(t.type));

/** The suffix of a field that is the exact twin of a deprecated Float field (`lineTotalDecimal`). */
export const DECIMAL_TWIN_SUFFIX = 'Decimal';

type TwinResolver = (parent: Record<string, unknown>) => unknown;

/**
 * Resolvers for the `Decimal` twins of an SDL: every object field `xDecimal: Decimal` that sits
 * beside a field `x` reads the parent's `x`, the same value the Float field prints, so the two
 * cannot drift and no resolver has to be written twice. The scalar prints that value as its
 * exact text. A twin whose type already has a resolver for it keeps that one.
 */
export function decimalTwinResolvers(typeDefs: DocumentNode): Record<string, Record<string, TwinResolver>> {
  const out: Record<string, Record<string, TwinResolver>> = {};
  for (const def of typeDefs.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    const names = new Set((def.fields ?? []).map((f) => f.name.value));
    for (const field of def.fields ?? []) {
      const name = field.name.value;
      if (namedType(field.type) !== 'Decimal' || !name.endsWith(DECIMAL_TWIN_SUFFIX)) continue;
      const twin = name.slice(0, -DECIMAL_TWIN_SUFFIX.length);
      if (!names.has(twin)) continue;
      const resolvers = out[def.name.value] ?? {};
      resolvers[name] = (parent) => parent[twin];
      out[def.name.value] = resolvers;
    }
  }
  return out;
}

/**
 * The one amount of an input that offers a deprecated `Float` field beside its `Decimal` twin,
 * as exact decimal text. Exactly one of the two must be given (or none, when it is optional);
 * either must have at most the currency's minor unit of decimals. A Float is read from its
 * shortest text, so 0.1 + 0.2 (0.30000000000000004) is refused, never rounded to 0.30.
 * Refusals are BAD_USER_INPUT with `extensions.errors` ({ pointer, message }) at `at` + the field.
 */
export function exactAmount(
  given: { float: number | null | undefined; decimal: Money | string | null | undefined },
  currency: string,
  field: string,
  opts: { required?: boolean; at?: string } = {},
): string | undefined {
  const twin = `${field}${DECIMAL_TWIN_SUFFIX}`;
  const at = opts.at ?? '/';
  const refuse = (name: string, message: string): never => {
    throw new GraphQLError(`${at.slice(1)}${name} ${message}`, {
      extensions: { code: 'BAD_USER_INPUT', errors: [{ pointer: `${at}${name}`, message }] },
    });
  };
  const exact = (value: Money, name: string): string => {
    const units = minorUnits(currency);
    if (value.decimalPlaces() > units) {
      refuse(name, `has more decimals than ${currency}'s minor unit allows (${units}): ${value.toFixed()}`);
    }
    return value.toFixed();
  };
  const { float } = given;
  // graphql-jit inlines a literal argument into its compiled code as JSON, and a Decimal's JSON is
  // its exact text: a literal reaches a resolver as that text, a variable as a Decimal.
  const decimal = typeof given.decimal === 'string' ? parseDecimal(given.decimal) : given.decimal;
  if (float != null && decimal != null)
    refuse(twin, `is given beside the deprecated ${field}: give one of them`);
  if (decimal != null) return exact(decimal, twin);
  if (float != null) {
    if (!Number.isFinite(float)) refuse(field, 'must be a finite amount');
    return exact(money(float), field);
  }
  if (opts.required === false) return undefined;
  return refuse(twin, `is required (or the deprecated ${field})`);
}
