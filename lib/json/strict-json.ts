/**
 * A strict JSON parser for agent bodies. JSON.parse keeps the last of duplicate keys (so
 * `{"quantity":1,"quantity":1000}` would be judged on a value the agent may not have meant)
 * and treats `__proto__` specially; this parser refuses both, plus `constructor`, and bounds
 * nesting. Keys are compared after unescaping, so `"\u005f_proto__"` is refused too. Objects
 * have no prototype. Pure and synchronous; bodies are small (ORDER_BODY_LIMIT_BYTES).
 */

export type StrictJsonResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);
const MAX_DEPTH = 32;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

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
    if (c === 123 /* { */) return this.object(depth + 1);
    if (c === 91 /* [ */) return this.array(depth + 1);
    if (c === 34 /* " */) return this.string();
    if (c === 45 || (c >= 48 && c <= 57)) return this.number();
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
        this.fail(`duplicate property name "${key.slice(0, 64)}"`);
      }
      seen.add(key);
      this.ws();
      if (this.s.charCodeAt(this.i) !== 58 /* : */) this.fail('expected ":"');
      this.i++;
      this.ws();
      out[key] = this.value(depth);
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
    this.i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) {
      this.i -= m[0].length;
      this.fail('number out of range');
    }
    return n;
  }
}
