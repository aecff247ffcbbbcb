/**
 * Locations in an ACP document as RFC 9535 JSONPath, the form ACP's `Error.param` takes
 * (`$.line_items[0].quantity`). Ajv locates an error by an RFC 6901 JSON pointer; these pure
 * functions turn one into the other and read a path back (for tests and for agents' params).
 *
 * The path is a normalized path (one segment per step, no wildcards or filters) except that a
 * member name that is a plain ASCII identifier is written in shorthand (`.name`), as the ACP
 * examples do; any other name is bracketed and escaped as RFC 9535 §2.7 says (`['odd key']`).
 */

import { isLoneSurrogate } from './well-formed.ts';

/** One step into a JSON value: an object member name or an array index. */
export type PathSegment = string | number;

const SHORTHAND = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INDEX = /^(?:0|[1-9][0-9]*)$/;

// RFC 9535 §2.7: the characters a normalized path escapes, and how.
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  "'": "\\'",
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};
const UNESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/**
 * A member name as a normalized path quotes it: `\\`, `\'`, and control characters escaped. A
 * lone surrogate (JSON can write one, `"\ud800"`) is escaped too, as `\ud800`: RFC 9535 has no
 * form for it (its paths are I-JSON strings), and written raw it would make the path itself no
 * Unicode text, which PostgreSQL cannot store (an import's error report) and JSON writers
 * escape anyway. parseJsonPath reads the escape back.
 */
function escapeName(name: string): string {
  let out = '';
  for (const c of name) {
    const code = c.charCodeAt(0);
    out += ESCAPES[c] ?? (code < 0x20 || isLoneSurrogate(c) ? `\\u${code.toString(16).padStart(4, '0')}` : c);
  }
  return out;
}

/** The JSONPath of a location given as segments: `['line_items', 0, 'quantity']` → `$.line_items[0].quantity`. */
export function formatJsonPath(segments: readonly PathSegment[]): string {
  let path = '$';
  for (const s of segments) {
    if (typeof s === 'number') path += `[${s}]`;
    else path += SHORTHAND.test(s) ? `.${s}` : `['${escapeName(s)}']`;
  }
  return path;
}

/** The reference tokens of an RFC 6901 JSON pointer, unescaped (`/a~1b/0` → `['a/b', '0']`). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new SyntaxError(`not a JSON pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The RFC 6901 JSON pointer of a location given as segments. */
export function formatPointer(segments: readonly PathSegment[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * The segments a JSON pointer names inside `root`. A pointer does not say whether `/0` is an
 * index or a member named "0": the value does, so the pointer is walked through it. A token
 * past the end of the value (a missing property) is a member name.
 */
export function pointerSegments(pointer: string, root: unknown): PathSegment[] {
  const segments: PathSegment[] = [];
  let at: unknown = root;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(at) && INDEX.test(token)) {
      segments.push(Number(token));
      at = at[Number(token)];
    } else {
      segments.push(token);
      at = isObject(at) && Object.hasOwn(at, token) ? at[token] : undefined;
    }
  }
  return segments;
}

/** The JSONPath of a JSON pointer into `root`. */
export function jsonPathOfPointer(pointer: string, root: unknown): string {
  return formatJsonPath(pointerSegments(pointer, root));
}

/**
 * The segments of a path this module writes (`$`, `.name`, `[n]`, `['…']` with RFC 9535
 * escapes). Anything else (wildcards, filters, slices, double-quoted names) is a SyntaxError.
 */
export function parseJsonPath(path: string): PathSegment[] {
  if (!path.startsWith('$')) throw new SyntaxError(`a JSONPath starts with $: ${path}`);
  const segments: PathSegment[] = [];
  let i = 1;
  while (i < path.length) {
    const rest = path.slice(i);
    const name = /^\.([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
    const index = /^\[(0|[1-9][0-9]*)\]/.exec(rest);
    if (name?.[1] !== undefined) {
      segments.push(name[1]);
      i += name[0].length;
    } else if (index?.[1] !== undefined) {
      segments.push(Number(index[1]));
      i += index[0].length;
    } else if (rest.startsWith("['")) {
      const [value, end] = readQuotedName(path, i + 2);
      segments.push(value);
      i = end;
    } else {
      throw new SyntaxError(`unexpected ${JSON.stringify(rest.slice(0, 8))} at ${i} in ${path}`);
    }
  }
  return segments;
}

/** The name quoted from `start` to its closing `']`, unescaped, and the index after the `]`. */
function readQuotedName(path: string, start: number): [string, number] {
  let value = '';
  let i = start;
  while (i < path.length) {
    const c = path[i] as string;
    if (c === "'") {
      if (path[i + 1] !== ']') break;
      return [value, i + 2];
    }
    if (c !== '\\') {
      value += c;
      i += 1;
      continue;
    }
    const e = path[i + 1] ?? '';
    if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(path.slice(i + 2, i + 6))) {
      value += String.fromCharCode(Number.parseInt(path.slice(i + 2, i + 6), 16));
      i += 6;
    } else if (UNESCAPES[e] !== undefined) {
      value += UNESCAPES[e];
      i += 2;
    } else {
      break;
    }
  }
  throw new SyntaxError(`unterminated or badly escaped name at ${start} in ${path}`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
