/**
 * A strict JSON parser for agent bodies. JSON.parse keeps the last of duplicate keys (so
 * `{"quantity":1,"quantity":1000}` would be judged on a value the agent may not have meant)
 * and treats `__proto__` specially; this parser refuses both, plus `constructor`, and bounds
 * nesting. Keys are compared after unescaping, so `"\u005f_proto__"` is refused too. Objects
 * have no prototype. Pure and synchronous; bodies are small (ORDER_BODY_LIMIT_BYTES).
 *
 * Numbers: the value is the nearest double (what every JSON reader gives), and the number's
 * text as written is kept beside it (`numberLexeme`), so money can be judged and stored
 * exactly: `5000.00000000000000001` is a double 5000 but its lexeme says more. A number a
 * double cannot hold even approximately (its magnitude overflows to Infinity, or a non-zero
 * value underflows to 0) is refused: no reader of the body could see what was written.
 */

import { cutText } from './well-formed.ts';

export type StrictJsonResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);
const MAX_DEPTH = 32;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const NON_ZERO_DIGIT = /[1-9]/;
/** The digits before any exponent: a non-zero one means the value is not zero. */
const MANTISSA = /^[^eE]*/;

/**
 * The text of each parsed number, by its container (object or array) and key or index. A
 * WeakMap: the lexemes live exactly as long as the parsed value, with no field added to it.
 */
const lexemes = new WeakMap<object, Map<string | number, string>>();

/** The number at `container[key]` as written in the JSON text, when a strict parse made it. */
export function numberLexeme(container: unknown, key: string | number): string | undefined {
  if (typeof container !== 'object' || container === null) return undefined;
  return lexemes.get(container)?.get(Array.isArray(container) ? Number(key) : String(key));
}

function keepLexeme(container: object, key: string | number, lexeme: string): void {
  let m = lexemes.get(container);
  if (!m) {
    m = new Map();
    lexemes.set(container, m);
  }
  m.set(key, lexeme);
}

class JsonSyntaxError extends Error {}

export function parseStrictJson(text: string): StrictJsonResult {
  const p = new Parser(text);
  try {
    p.ws();
    const value = p.value(0);
    p.ws();
    if (p.i !== text.length) p.fail('unexpected data after the JSON value');
    return { ok: true, value };
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false, reason: err.message };
    throw err;
  }
}

class Parser {
  i = 0;
  /** The text of the value just parsed when it was a number, else undefined. */
  lexeme: string | undefined;
  constructor(private readonly s: string) {}

  fail(what: string): never {
    throw new JsonSyntaxError(`${what} at position ${this.i}`);
  }

  ws(): void {
    const s = this.s;
    let c = s.charCodeAt(this.i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = s.charCodeAt(++this.i);
  }

  value(depth: number): unknown {
    const c = this.s.charCodeAt(this.i);
    if (c === 45 || (c >= 48 && c <= 57)) return this.number();
    // Only a number leaves its text behind (a nested number must not be taken for its container's).
    const v = this.nonNumber(c, depth);
    this.lexeme = undefined;
    return v;
  }

  nonNumber(c: number, depth: number): unknown {
    if (c === 123 /* { */) return this.object(depth + 1);
    if (c === 91 /* [ */) return this.array(depth + 1);
    if (c === 34 /* " */) return this.string();
    if (this.s.startsWith('true', this.i)) return this.literal(4, true);
    if (this.s.startsWith('false', this.i)) return this.literal(5, false);
    if (this.s.startsWith('null', this.i)) return this.literal(4, null);
    return this.fail(Number.isNaN(c) ? 'unexpected end of JSON' : 'unexpected character');
  }

  literal<T>(length: number, v: T): T {
    this.i += length;
    return v;
  }

  object(depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    const out: Record<string, unknown> = Object.create(null);
    const seen = new Set<string>();
    this.i++;
    this.ws();
    if (this.s.charCodeAt(this.i) === 125 /* } */) {
      this.i++;
      return out;
    }
    for (;;) {
      if (this.s.charCodeAt(this.i) !== 34) this.fail('expected a property name');
      const at = this.i;
      const key = this.string();
      if (FORBIDDEN_KEYS.has(key)) {
        this.i = at;
        this.fail(`forbidden property name "${key}"`);
      }
      if (seen.has(key)) {
        this.i = at;
        // Quoted as JSON writes it: a lone surrogate escaped, a pair never cut (the reason is stored).
        this.fail(`duplicate property name ${JSON.stringify(cutText(key, 64))}`);
      }
      seen.add(key);
      this.ws();
      if (this.s.charCodeAt(this.i) !== 58 /* : */) this.fail('expected ":"');
      this.i++;
      this.ws();
      out[key] = this.value(depth);
      if (this.lexeme !== undefined) keepLexeme(out, key, this.lexeme);
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 125) return out;
      if (c !== 44 /* , */) {
        this.i--;
        this.fail('expected "," or "}"');
      }
      this.ws();
    }
  }

  array(depth: number): unknown[] {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    const out: unknown[] = [];
    this.i++;
    this.ws();
    if (this.s.charCodeAt(this.i) === 93 /* ] */) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      if (this.lexeme !== undefined) keepLexeme(out, out.length - 1, this.lexeme);
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 93) return out;
      if (c !== 44) {
        this.i--;
        this.fail('expected "," or "]"');
      }
      this.ws();
    }
  }

  string(): string {
    const s = this.s;
    const start = this.i;
    let escaped = false;
    let j = start + 1;
    for (;;) {
      const c = s.charCodeAt(j);
      if (Number.isNaN(c)) {
        this.i = j;
        this.fail('unterminated string');
      }
      if (c === 34) break;
      if (c < 32) {
        this.i = j;
        this.fail('control character in string');
      }
      if (c === 92 /* \ */) {
        escaped = true;
        j += 2;
        continue;
      }
      j++;
    }
    this.i = j + 1;
    if (!escaped) return s.slice(start + 1, j);
    // Escapes are rare in agent bodies: let the platform decode (and validate) them.
    try {
      return JSON.parse(s.slice(start, j + 1)) as string;
    } catch {
      this.i = start;
      return this.fail('invalid escape in string');
    }
  }

  number(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) return this.fail('invalid number');
    const text = m[0];
    const n = Number(text);
    if (!Number.isFinite(n) || (n === 0 && NON_ZERO_DIGIT.test(MANTISSA.exec(text)?.[0] ?? ''))) {
      this.fail('number out of range');
    }
    this.i += text.length;
    this.lexeme = text;
    return n;
  }
}
