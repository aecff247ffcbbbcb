/** Reading MCP tool results in tests. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

/** The result's text: the route's body as sent (a refusal's problem+json is only here). */
export const textOf = (r: CallToolResult): string =>
  r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** A refused call's RFC 9457 problem: the first text block, parsed (no structuredContent on isError). */
export function problemOf(r: CallToolResult): Record<string, unknown> {
  expect(r.isError).toBe(true);
  expect(r.structuredContent).toBeUndefined();
  const first = r.content[0];
  return JSON.parse(first?.type === 'text' ? first.text : 'null') as Record<string, unknown>;
}
