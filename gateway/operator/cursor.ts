/**
 * Opaque page cursors: base64url of a small JSON array. Opaque so clients pass them back as
 * given and the server may change what they hold; decoded strictly, so a forged or damaged
 * cursor is a 400, never a 5xx.
 */
export const encodeCursor = (values: readonly (string | number)[]): string =>
  Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');

export function decodeCursor(cursor: string): unknown[] | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
