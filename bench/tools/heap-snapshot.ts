/**
 * A V8 heap snapshot (.heapsnapshot) read into flat arrays: each node's type, name, id and
 * size, and its retainers, for the tools that ask what keeps objects alive (retainers.ts,
 * lifetimes.ts). Chrome DevTools reads the same files; these tools print the few answers we
 * need from a script.
 */
import { readFileSync } from 'node:fs';

interface RawSnapshot {
  snapshot: {
    meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapSnapshot {
  /** Number of nodes; a node is named by its index 0…count-1. */
  readonly count: number;
  typeOf(n: number): string;
  nameOf(n: number): string;
  /** The object's id: the same object keeps its id across snapshots of one process,. */
  idOf(n: number): number;
  sizeOf(n: number): number;
  /** The shortest chain of strong references from a GC root to `n`, each step `type name --edge-->`. */
  retainingPath(n: number): string[];
}

export function readSnapshot(file: string): HeapSnapshot {
  const s = JSON.parse(readFileSync(file, 'utf8')) as RawSnapshot;
  const fields = s.snapshot.meta.node_fields;
  const nf = fields.length;
  const ef = s.snapshot.meta.edge_fields.length;
  const [nodeTypes] = s.snapshot.meta.node_types;
  const [edgeTypes] = s.snapshot.meta.edge_types;
  const at = { type: fields.indexOf('type'), name: fields.indexOf('name'), id: fields.indexOf('id') };
  const sizeAt = fields.indexOf('self_size');
  const edgeCountAt = fields.indexOf('edge_count');
  const count = s.nodes.length / nf;
  const typeOf = (n: number) => nodeTypes[s.nodes[n * nf + at.type] as number] as string;
  const nameOf = (n: number) => s.strings[s.nodes[n * nf + at.name] as number] as string;

  let back: { from: number; edge: string }[][] | undefined;
  // Reverse edges (who points at each node, by what name), built on the first path asked for.
  const retainers = () => {
    if (back) return back;
    const built: { from: number; edge: string }[][] = Array.from({ length: count }, () => []);
    let e = 0;
    for (let n = 0; n < count; n++) {
      const end = e + (s.nodes[n * nf + edgeCountAt] as number);
      for (; e < end; e++) {
        const type = edgeTypes[s.edges[e * ef] as number];
        if (type === 'weak') continue;
        const nameOrIndex = s.edges[e * ef + 1] as number;
        const to = (s.edges[e * ef + 2] as number) / nf;
        const label =
          type === 'element' || type === 'hidden' ? `[${nameOrIndex}]` : (s.strings[nameOrIndex] ?? '?');
        built[to]?.push({ from: n, edge: `${type}:${label}` });
      }
    }
    back = built;
    return built;
  };

  return {
    count,
    typeOf,
    nameOf,
    idOf: (n) => s.nodes[n * nf + at.id] as number,
    sizeOf: (n) => s.nodes[n * nf + sizeAt] as number,
    retainingPath(target) {
      // Breadth-first back towards a root (node 0 or a synthetic one): the shortest path.
      const from = retainers();
      const seen = new Map<number, { to: number; edge: string } | null>([[target, null]]);
      const queue = [target];
      let root = -1;
      for (let i = 0; i < queue.length && root < 0; i++) {
        const n = queue[i] as number;
        for (const r of from[n] ?? []) {
          if (seen.has(r.from)) continue;
          seen.set(r.from, { to: n, edge: r.edge });
          if (typeOf(r.from) === 'synthetic' || r.from === 0) {
            root = r.from;
            break;
          }
          queue.push(r.from);
        }
      }
      const path: string[] = [];
      for (let n = root; n >= 0 && n !== target; ) {
        const step = seen.get(n);
        if (!step) break;
        path.push(`${typeOf(n)} ${nameOf(n).slice(0, 60)} --${step.edge}-->`);
        n = step.to;
      }
      return path;
    },
  };
}
