/**
 * Summarises a V8 .heapsnapshot: self size by node type and constructor/name, largest first.
 *   tsx bench/tools/heap-summary.ts <file.heapsnapshot> [top=40]
 * (Chrome DevTools reads the same file interactively; this is the text docs/performance.md quotes.)
 */
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: heap-summary <file.heapsnapshot> [top]');
const snap = JSON.parse(readFileSync(file, 'utf8')) as {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
};
const fields = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const width = fields.length;
const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
const bySize = new Map<string, { size: number; count: number }>();
let total = 0;
for (let i = 0; i < snap.nodes.length; i += width) {
  const type = types[snap.nodes[i + (typeAt as number)] as number] ?? '?';
  let name = snap.strings[snap.nodes[i + (nameAt as number)] as number] ?? '?';
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '(strings)';
  if (type === 'code') name = '(code)';
  if (type === 'array') name = `(array) ${name.slice(0, 30)}`;
  const key = `${type}: ${name.slice(0, 60)}`;
  const size = snap.nodes[i + (sizeAt as number)] as number;
  total += size;
  const e = bySize.get(key) ?? { size: 0, count: 0 };
  e.size += size;
  e.count++;
  bySize.set(key, e);
}
console.log(`heap snapshot: ${(total / 1e6).toFixed(1)} MB of self sizes`);
for (const [k, e] of [...bySize].sort((a, b) => b[1].size - a[1].size).slice(0, Number(topArg ?? 40))) {
  console.log(`${(e.size / 1e6).toFixed(2).padStart(7)} MB ${String(e.count).padStart(8)}×  ${k}`);
}
