import { Decimal } from 'decimal.js';

/**
 * Money is never binary floating point for arithmetic: 19.99 × 1.15 must be 22.99, not 22.98.
 * A dedicated Decimal constructor keeps these settings from leaking into other users of decimal.js.
 */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Money = Decimal;

/** Parse a JSON number or numeric string into exact decimal (from its shortest decimal text). */
export const money = (value: number | string | Decimal): Decimal => new Money(value);

/** Round half-up to 2 decimals (the spec's "rounded to 2 decimals"). */
export const round2 = (value: Decimal): Decimal => value.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

/** The JSON number for a 2-decimal amount (exact text, then parsed once). */
export const toNumber2 = (value: Decimal): number => Number(round2(value).toFixed(2));

/** Integer minor units (cents) for allocation arithmetic. */
export const toCents = (value: Decimal): bigint => BigInt(round2(value).times(100).toFixed(0));
export const fromCents = (cents: bigint): Decimal => new Money(cents.toString()).dividedBy(100);

/**
 * Cents of an amount that already has at most 2 decimals (a price or a discount as the services
 * return them): sums of such amounts run exactly in integer cents, without a Decimal per line.
 * Exact for |amount| < 9 × 10^13: amount × 100 is then within far less than 0.5 of its cents.
 */
export const centsOf = (amount: number): number => Math.round(amount * 100);
/** The JSON number of an integer amount of cents (the double nearest to it, as `Number("22.99")`). */
export const amountOf = (cents: number): number => cents / 100;
