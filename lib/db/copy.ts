/**
 * One row of PostgreSQL's COPY text format: fields separated by tabs, ended by a newline, each
 * field's backslashes, tabs, newlines and carriage returns escaped; `null` is `\N`
 * (https://www.postgresql.org/docs/current/sql-copy.html, "Text Format").
 */
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

const field = (v: string | number | null): string =>
  v === null
    ? '\\N'
    : typeof v === 'number'
      ? String(v)
      : v.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c] as string);

export const copyRow = (fields: readonly (string | number | null)[]): string =>
  `${fields.map(field).join('\t')}\n`;
