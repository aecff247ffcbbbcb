import fc from 'fast-check';
import { buildSchema, GraphQLError, graphqlSync, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  DecimalScalar,
  decimalTwinResolvers,
  exactAmount,
  formatDecimal,
  minorUnits,
  parseDecimal,
} from '../../lib/graphql/decimal.ts';
import { money } from '../../lib/money.ts';

/** The code and message of what `fn` throws (undefined when it does not throw). */
function refusal(fn: () => unknown): { code?: unknown; message: string; errors?: unknown } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(GraphQLError);
    const e = err as GraphQLError;
    return { code: e.extensions.code, message: e.message, errors: e.extensions.errors };
  }
}

/** The exact decimal text of cents / 100, by integer arithmetic only. */
const centsText = (c: bigint): string => {
  const sign = c < 0n ? '-' : '';
  const a = c < 0n ? -c : c;
  const frac = (a % 100n).toString().padStart(2, '0').replace(/0+$/, '');
  return `${sign}${a / 100n}${frac ? `.${frac}` : ''}`;
};

describe('the Decimal scalar', () => {
  it.each([
    ['19.99', '19.99'],
    ['0', '0'],
    ['-1.5', '-1.5'],
    ['0.10', '0.1'],
    ['1000000000.00000000000000001', '1000000000.00000000000000001'],
    ['999999999999999999999999.99', '999999999999999999999999.99'],
  ])('reads %s exactly', (text, printed) => {
    expect(parseDecimal(text).toFixed()).toBe(printed);
  });

  it.each([
    [19.99, 'a JSON number'],
    ['1e3', 'an exponent'],
    ['01.5', 'a leading zero'],
    ['.5', 'no integer part'],
    ['5.', 'no fraction digits'],
    [' 1', 'a space'],
    ['', 'nothing'],
    ['NaN', 'not a number'],
    ['Infinity', 'infinity'],
    ['+1', 'a plus sign'],
    ['1'.repeat(41), 'more than 40 characters'],
    [null, 'null'],
    [true, 'a boolean'],
  ] as [unknown, string][])('refuses %j (%s) with BAD_USER_INPUT', (value) => {
    expect(refusal(() => parseDecimal(value))?.code).toBe('BAD_USER_INPUT');
  });

  it('prints plain decimal text, never an exponent or -0', () => {
    expect(formatDecimal(1e21)).toBe('1000000000000000000000');
    expect(formatDecimal(1e-8)).toBe('0.00000001');
    expect(formatDecimal(-0)).toBe('0');
    expect(formatDecimal('12.50')).toBe('12.50');
    expect(refusal(() => formatDecimal('1e3'))?.message).toContain('cannot represent');
    expect(formatDecimal(money('22.99'))).toBe('22.99');
    expect(refusal(() => formatDecimal(Number.NaN))?.message).toContain('NaN');
    expect(refusal(() => formatDecimal({}))?.message).toContain('cannot represent');
  });

  it('prints every 2-decimal amount a service computes (cents / 100) as its exact decimal text', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), (c) => {
        // Within 2^53 cents the double c / 100 prints back as the decimal it stands for.
        expect(formatDecimal(Number(c) / 100)).toBe(centsText(c));
        expect(parseDecimal(formatDecimal(Number(c) / 100)).eq(money(centsText(c)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a literal from its source text: 0.1 and 19.99 are never doubles', () => {
    const schema = buildSchema('scalar Decimal type Query { echo(amount: Decimal!): Decimal! }');
    Object.assign(schema.getType('Decimal') as object, {
      parseLiteral: DecimalScalar.parseLiteral,
      parseValue: DecimalScalar.parseValue,
      serialize: DecimalScalar.serialize,
    });
    const root = { echo: ({ amount }: { amount: { toFixed(): string } }) => amount.toFixed() };
    const run = (source: string, variableValues?: Record<string, unknown>) =>
      graphqlSync({ schema, source, rootValue: root, ...(variableValues ? { variableValues } : {}) });
    expect(run('{ echo(amount: 0.30000000000000000001) }').data).toEqual({ echo: '0.30000000000000000001' });
    expect(run('{ echo(amount: "19.99") }').data).toEqual({ echo: '19.99' });
    expect(run('query($a: Decimal!) { echo(amount: $a) }', { a: '12345678901234567.89' }).data).toEqual({
      echo: '12345678901234567.89',
    });
    const number = run('query($a: Decimal!) { echo(amount: $a) }', { a: 19.99 });
    expect(number.errors?.[0]?.message).toContain('not a number');
    const bool = run('{ echo(amount: true) }');
    expect(bool.errors?.[0]?.message).toContain('BooleanValue');
  });
});

describe('minor units', () => {
  it.each([
    ['USD', 2],
    ['EUR', 2],
    ['JPY', 0],
    ['BHD', 3],
    ['not-a-code', 2],
  ])('%s has %i', (currency, units) => {
    expect(minorUnits(currency)).toBe(units);
  });
});

describe('exactAmount: a deprecated Float input beside its Decimal twin', () => {
  const amount = (float: number | null, decimal: string | null, currency = 'USD', required = true) =>
    exactAmount({ float, decimal: decimal === null ? null : parseDecimal(decimal) }, currency, 'amount', {
      required,
      at: '/input/',
    });

  it('takes either form as exact text', () => {
    expect(amount(null, '19.99')).toBe('19.99');
    expect(amount(19.99, null)).toBe('19.99');
    expect(amount(null, '1000', 'JPY')).toBe('1000');
    expect(amount(null, '1.234', 'BHD')).toBe('1.234');
    expect(amount(null, null, 'USD', false)).toBeUndefined();
    expect(amount(null, '999999999999.99')).toBe('999999999999.99');
  });

  it.each([
    [
      '0.1 + 0.2 as a Float (0.30000000000000004), never rounded to 0.30',
      0.1 + 0.2,
      null,
      'USD',
      '/input/amount',
    ],
    ['a Float with a third decimal', 19.999, null, 'USD', '/input/amount'],
    ['1e-17 above a limit', null, '1000000000.00000000000000001', 'USD', '/input/amountDecimal'],
    ['a fraction of a yen', null, '100.5', 'JPY', '/input/amountDecimal'],
    ['a Float fraction of a yen', 100.5, null, 'JPY', '/input/amount'],
    ['both forms', 19.99, '19.99', 'USD', '/input/amountDecimal'],
    ['neither form', null, null, 'USD', '/input/amountDecimal'],
    ['an infinite Float', Number.POSITIVE_INFINITY, null, 'USD', '/input/amount'],
  ])('refuses %s with BAD_USER_INPUT at its pointer', (_, float, decimal, currency, pointer) => {
    const r = refusal(() => amount(float as number | null, decimal as string | null, currency as string));
    expect(r?.code).toBe('BAD_USER_INPUT');
    expect(r?.errors).toEqual([{ pointer, message: expect.any(String) }]);
  });

  it('accepts exactly the amounts with at most the minor unit of decimals, as a property', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 6 }), (units, scale) => {
        const text =
          scale === 0
            ? String(units)
            : `${units / 10n ** BigInt(scale)}.${String(units % 10n ** BigInt(scale)).padStart(scale, '0')}`;
        const places = money(text).decimalPlaces();
        const r = refusal(() => amount(null, text));
        if (places <= 2) {
          expect(r).toBeUndefined();
          expect(amount(null, text)).toBe(money(text).toFixed());
        } else expect(r?.code).toBe('BAD_USER_INPUT');
      }),
    );
  });
});

describe('decimalTwinResolvers', () => {
  it('resolves each xDecimal beside an x from the parent x, and nothing else', () => {
    const twins = decimalTwinResolvers(
      parse(`scalar Decimal
        type Line { total: Float! totalDecimal: Decimal! orphanDecimal: Decimal name: String nameDecimal: String }
        extend type Order { amount: Float amountDecimal: Decimal }`),
    );
    expect(Object.keys(twins).sort()).toEqual(['Line', 'Order']);
    expect(Object.keys(twins.Line ?? {})).toEqual(['totalDecimal']);
    expect(twins.Line?.totalDecimal?.({ total: 45.98 })).toBe(45.98);
    expect(twins.Order?.amountDecimal?.({ amount: '12.50' })).toBe('12.50');
  });
});
