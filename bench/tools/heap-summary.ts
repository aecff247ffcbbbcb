/**
 * Summarises a V8 .heapsnapshot: self size by node type and constructor/name, largest first.
 *   tsx bench/tools/heap-summary.ts <file.heapsnapshot> [top=40]
 * With two snapshots (before, after), prints what grew between them, largest growth first:
 *   tsx bench/tools/heap-summary.ts <before.heapsnapshot> <after.heapsnapshot> [top=40]
 * (Chrome DevTools reads the same file interactively; this is the text docs/performance.md quotes.)
 */
import { readFileSync } from 'node:fs';

interface Tally {
  size: number;
  count: number;
}

function summarise(file: string): { total: number; byKey: Map<string, Tally> } {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const byKey = new Map<string, Tally>();
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
    const e = byKey.get(key) ?? { size: 0, count: 0 };
    e.size += size;
    e.count++;
    byKey.set(key, e);
  }
  return { total, byKey };
}

const args = process.argv.slice(2);
const top = /^\d+$/.test(args.at(-1) ?? '') ? Number(args.pop()) : 40;
const [first, second] = args;
if (!first) throw new Error('usage: heap-summary <file.heapsnapshot> [after.heapsnapshot] [top]');
const mb = (bytes: number) => (bytes / 1e6).toFixed(2).padStart(7);

const before = summarise(first);
if (!second) {
  console.log(`heap snapshot: ${(before.total / 1e6).toFixed(1)} MB of self sizes`);
  for (const [k, e] of [...before.byKey].sort((a, b) => b[1].size - a[1].size).slice(0, top)) {
    console.log(`${mb(e.size)} MB ${String(e.count).padStart(8)}×  ${k}`);
  }
} else {
  const after = summarise(second);
  console.log(
    `heap snapshots: ${(before.total / 1e6).toFixed(1)} → ${(after.total / 1e6).toFixed(1)} MB of self sizes`,
  );
  const keys = new Set([...before.byKey.keys(), ...after.byKey.keys()]);
  const growth = [...keys].map((k) => {
    const b = before.byKey.get(k) ?? { size: 0, count: 0 };
    const a = after.byKey.get(k) ?? { size: 0, count: 0 };
    return { k, size: a.size - b.size, count: a.count - b.count };
  });
  for (const g of growth.sort((x, y) => y.size - x.size).slice(0, top)) {
    console.log(`${mb(g.size)} MB ${String(g.count).padStart(8)}×  ${g.k}`);
  }
}
