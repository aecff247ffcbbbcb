/**
 * Bytes allocated by function from a V8 sampling heap profile (the inspector's
 * `HeapProfiler.stopSampling`, or a .heapprofile file written by ./heap-sampling-probe.cjs), for
 * ./alloc-profile.ts (in process) and ./ucp-ab.ts (the server under the UCP flows). Taken with
 * the objects the collections freed included, the profile counts a request's garbage, which the
 * default heap profile leaves out.
 */

export interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  id: number;
  children: SampleNode[];
}

export interface Allocations {
  /** Bytes sampled in all. */
  total: number;
  /** By the function that allocated. */
  self: Map<string, number>;
  /** By the nearest frame of our own code (compiled dist/, not node_modules) on the stack. */
  ours: Map<string, number>;
  /** By every function on the stack (a recursive one counted once per sample). */
  inclusive: Map<string, number>;
}

const frameName = (f: SampleNode['callFrame']) =>
  `${f.functionName || '(anonymous)'}  ${f.url.replace(/^.*\/(node_modules|dist)\//, '').replace(/^file:\/\//, '')}:${f.lineNumber + 1}`;

const isOurs = (url: string) => url.includes('/dist/') && !url.includes('node_modules');

/** Sums a profile's samples by function three ways (./alloc-profile.ts's tables). */
export function allocations(head: SampleNode): Allocations {
  const a: Allocations = { total: 0, self: new Map(), ours: new Map(), inclusive: new Map() };
  const add = (m: Map<string, number>, k: string, b: number) => m.set(k, (m.get(k) ?? 0) + b);
  // Iterative: a deep profile overflows a recursive walk's stack.
  const stack: { n: SampleNode; ourFrame: string; names: readonly string[] }[] = [
    { n: head, ourFrame: '(outside our code)', names: [] },
  ];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { n, ourFrame } = top;
    const name = frameName(n.callFrame);
    const here = isOurs(n.callFrame.url) ? name : ourFrame;
    const names = top.names.includes(name) ? top.names : [...top.names, name];
    if (n.selfSize) {
      a.total += n.selfSize;
      add(a.self, name, n.selfSize);
      add(a.ours, here, n.selfSize);
      for (const f of names) add(a.inclusive, f, n.selfSize);
    }
    for (const c of n.children) stack.push({ n: c, ourFrame: here, names });
  }
  return a;
}

/** The `k` largest entries as lines of KB per `per` (requests, flows). */
export const topAllocations = (m: Map<string, number>, per: number, k = 25, only?: RegExp): string =>
  [...m]
    .filter(([n]) => !only || only.test(n))
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([n, b]) => `${(b / per / 1024).toFixed(1).padStart(7)} KB  ${n}`)
    .join('\n');
