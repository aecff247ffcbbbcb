import { escapeLoneSurrogates } from '../../../lib/json/well-formed.ts';
import { parseCents } from './cents.ts';
import type { Violation } from './errors.ts';

/**
 * Collects violations while a rule document is compiled, each at a JSON pointer (RFC 6901), so
 * one load reports every problem of a document, not only the first.
 */
export class Check {
  readonly errors: Violation[] = [];

  fail(pointer: string, message: string): undefined {
    // A member name or value quoted from the document may hold a lone surrogate: written raw, the
    // violation itself would be no Unicode text (the error of a rule refused for holding one).
    this.errors.push({ pointer: escapeLoneSurrogates(pointer), message: escapeLoneSurrogates(message) });
    return undefined;
  }

  object(v: unknown, at: string): Record<string, unknown> | undefined {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
    return this.fail(at, 'must be an object');
  }

  /** Refuses members the format does not define (closed objects). */
  onlyKeys(o: Record<string, unknown>, at: string, allowed: readonly string[]): void {
    for (const k of Object.keys(o))
      if (!allowed.includes(k)) this.fail(`${at}/${escapeToken(k)}`, 'is not a known field');
  }

  string(
    v: unknown,
    at: string,
    opts: { min?: number; max?: number; pattern?: RegExp } = {},
  ): string | undefined {
    const { min = 1, max = 200, pattern } = opts;
    if (typeof v !== 'string') return this.fail(at, 'must be a string');
    if (v.length < min || v.length > max) return this.fail(at, `must have ${min} to ${max} characters`);
    if (pattern && !pattern.test(v)) return this.fail(at, `must match ${pattern.source}`);
    return v;
  }

  integer(v: unknown, at: string, min: number, max: number): number | undefined {
    if (typeof v !== 'number' || !Number.isInteger(v)) return this.fail(at, 'must be an integer');
    if (v < min || v > max) return this.fail(at, `must be between ${min} and ${max}`);
    return v;
  }

  number(v: unknown, at: string): number | undefined {
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail(at, 'must be a number');
    return v;
  }

  /** A money amount (number or numeric string, at most 2 decimals, ≥ 0) in cents. */
  cents(v: unknown, at: string): number | undefined {
    const c = typeof v === 'number' || typeof v === 'string' ? parseCents(v) : undefined;
    if (c === undefined || c < 0 || c > 1e14)
      return this.fail(at, 'must be an amount ≥ 0 with at most 2 decimals');
    return c;
  }

  array(v: unknown, at: string, min: number, max: number): unknown[] | undefined {
    if (!Array.isArray(v)) return this.fail(at, 'must be an array');
    if (v.length < min || v.length > max) return this.fail(at, `must have ${min} to ${max} items`);
    return v;
  }

  oneOf<T extends string>(v: unknown, at: string, values: readonly T[]): T | undefined {
    if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
    return this.fail(at, `must be one of ${values.join(', ')}`);
  }
}

/** RFC 6901 escaping of one reference token. */
export const escapeToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
