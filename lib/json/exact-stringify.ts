import { numberLexeme } from './strict-json.ts';

/**
 * JSON text of a value a strict parse made, with every number written as it was read (its
 * lexeme), not as the nearest double: `5000.00000000000000001` stays that, so whoever parses
 * the text next judges what the sender wrote. Numbers without a lexeme are written as
 * JSON.stringify would. `lexemesOf` names the container whose lexemes the top-level members
 * have, for a value assembled from another parsed object's members.
 *
 * JSON.stringify has no hook that can emit raw number text on Node 20 (JSON.rawJSON is newer),
 * hence this small writer.
 */
export function stringifyExact(value: unknown, lexemesOf: unknown = value): string {
  if (Array.isArray(value)) return `[${value.map((v, i) => member(lexemesOf, i, v)).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${member(lexemesOf, k, v)}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

function member(container: unknown, key: string | number, v: unknown): string {
  if (typeof v !== 'number') return stringifyExact(v);
  const lexeme = numberLexeme(container, key);
  return lexeme !== undefined && Number(lexeme) === v ? lexeme : (JSON.stringify(v) ?? 'null');
}
