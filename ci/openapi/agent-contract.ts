/**
 * The bounded agent contract (spec, Security posture: agents never receive the raw contract or
 * full schema). Generated from the full documents in schemas/openapi/: only the operations
 * marked `x-agent-facing: true`, with just the components, security schemes and tags they use.
 * `npm run contract:agent` writes schemas/openapi/agent.yaml; `contract:check` fails when the
 * committed one is stale.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import YAML from 'yaml';
import { AGENT_CONTRACT_FILE, fullDocumentFiles, OPENAPI_DIR } from '../../lib/openapi-files.ts';
import { AGENT_MARKER, METHODS } from './agent-marker.ts';

export { AGENT_CONTRACT_FILE, fullDocumentFiles, OPENAPI_DIR };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const unescapePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

function atPointer(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const part of pointer.split('/').slice(1).map(unescapePointer)) {
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Json)[part];
  }
  return node;
}

/** JSON with object keys sorted: two documents may order the same keys differently. */
const stable = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    isObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x,
  );

class Bundler {
  readonly components: Record<string, Json> = {};
  /** `file#pointer` of a component → its name in the agent contract. */
  private readonly names = new Map<string, string>();
  private readonly docs = new Map<string, unknown>();

  constructor(preloaded: ReadonlyMap<string, unknown>) {
    for (const [file, doc] of preloaded) this.docs.set(resolve(file), doc);
  }

  doc(file: string): unknown {
    const abs = resolve(file);
    if (!this.docs.has(abs)) this.docs.set(abs, YAML.parse(readFileSync(abs, 'utf8')));
    return this.docs.get(abs);
  }

  /** A deep copy of `value` (found in `file`) whose $refs all point inside the agent contract. */
  bring(value: unknown, file: string): unknown {
    if (Array.isArray(value)) return value.map((v) => this.bring(v, file));
    if (!isObject(value)) return value;
    if (typeof value.$ref === 'string') return this.ref(value, file);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.bring(v, file)]));
  }

  private ref(node: Json, file: string): unknown {
    const [target = '', pointer = ''] = String(node.$ref).split('#');
    const targetFile = target ? resolve(dirname(file), target) : resolve(file);
    const m = /^\/components\/([^/]+)\/([^/]+)$/.exec(pointer);
    const siblings = Object.fromEntries(
      Object.entries(node)
        .filter(([k]) => k !== '$ref')
        .map(([k, v]) => [k, this.bring(v, file)]),
    );
    if (!m?.[1] || !m[2]) {
      // Not a component: inline what it points at (the agent contract is one self-contained file).
      const inlined = this.bring(atPointer(this.doc(targetFile), pointer), targetFile);
      return isObject(inlined) ? { ...inlined, ...siblings } : inlined;
    }
    const kind = m[1];
    const name = unescapePointer(m[2]);
    const key = `${targetFile}#${pointer}`;
    let local = this.names.get(key);
    if (!local) {
      const section = this.components[kind] ?? {};
      this.components[kind] = section;
      local = name in section ? `${name}_${basename(targetFile).replace(/\.ya?ml$/, '')}` : name;
      this.names.set(key, local);
      section[local] = {}; // reserved first: a recursive schema refers to itself
      section[local] = this.bring(atPointer(this.doc(targetFile), pointer), targetFile);
    }
    return { $ref: `#/components/${kind}/${local.replace(/~/g, '~0').replace(/\//g, '~1')}`, ...siblings };
  }
}

export interface AgentContractOptions {
  /** `info.version` of the agent contract (the gateway's version, package.json). */
  readonly version: string;
}

/** Builds the agent contract from full documents (file → parsed document). */
export function buildAgentContract(sources: ReadonlyMap<string, unknown>, opts: AgentContractOptions): Json {
  const bundler = new Bundler(sources);
  const paths: Record<string, Json> = {};
  const schemes: Record<string, { value: unknown; from: string }> = {};
  /** Security schemes are referenced by name: a scheme that differs between documents is renamed. */
  const schemeName = (name: string, doc: Json, file: string): string => {
    const defs =
      isObject(doc.components) && isObject(doc.components.securitySchemes)
        ? doc.components.securitySchemes
        : {};
    const value = bundler.bring(defs[name], file);
    let local = name;
    const seen = schemes[local];
    if (seen && stable(seen.value) !== stable(value))
      local = `${name}_${basename(file).replace(/\.ya?ml$/, '')}`;
    schemes[local] ??= { value, from: file };
    return local;
  };
  const tagNames = new Set<string>();
  const tagDefs = new Map<string, unknown>();
  let servers: unknown;
  let meta: Json = {};
  for (const [file, doc] of [...sources].sort(([a], [b]) => a.localeCompare(b))) {
    if (!isObject(doc) || !isObject(doc.paths)) continue;
    for (const t of Array.isArray(doc.tags) ? doc.tags : [])
      if (isObject(t) && typeof t.name === 'string' && !tagDefs.has(t.name)) tagDefs.set(t.name, t);
    for (const [route, item] of Object.entries(doc.paths)) {
      if (!isObject(item)) continue;
      for (const method of METHODS) {
        const op = item[method];
        if (!isObject(op) || op[AGENT_MARKER] !== true) continue;
        const target = paths[route] ?? {};
        paths[route] = target;
        if (method in target)
          throw new Error(`${method.toUpperCase()} ${route} is agent-facing in two documents (${file})`);
        if (Array.isArray(item.parameters) && !target.parameters)
          target.parameters = bundler.bring(item.parameters, file);
        const security = (
          Array.isArray(op.security) ? op.security : Array.isArray(doc.security) ? doc.security : []
        )
          .filter(isObject)
          .map((req) =>
            Object.fromEntries(
              Object.entries(req).map(([name, scopes]) => [schemeName(name, doc, file), scopes]),
            ),
          );
        target[method] = { ...(bundler.bring(op, file) as Json), security };
        for (const t of Array.isArray(op.tags) ? op.tags : []) tagNames.add(String(t));
        servers ??= doc.servers;
        if (Object.keys(meta).length === 0 && isObject(doc.info))
          meta = Object.fromEntries(
            Object.entries(doc.info).filter(([k]) => k === 'contact' || k === 'license'),
          );
      }
    }
  }
  const components: Record<string, Json> = { ...bundler.components };
  if (Object.keys(schemes).length > 0)
    components.securitySchemes = Object.fromEntries(Object.entries(schemes).map(([k, v]) => [k, v.value]));
  const sorted = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Commerce: agent contract',
      version: opts.version,
      description:
        'The operations an AI agent may call, and nothing else. Generated from the full contracts; ' +
        'agents never receive those or the GraphQL schema.',
      ...meta,
    },
    ...(servers ? { servers } : {}),
    ...(tagNames.size > 0
      ? { tags: [...tagNames].sort().map((n) => tagDefs.get(n) ?? { name: n, description: n }) }
      : {}),
    paths: sorted(paths),
    components: Object.fromEntries(
      Object.entries(components)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sorted(v)]),
    ),
  };
}

export const AGENT_CONTRACT_HEADER = [
  ' Generated by `npm run contract:agent` from the operations marked x-agent-facing: true in',
  ' schemas/openapi/*.yaml. Do not edit: change the source document and regenerate.',
].join('\n');

export function renderAgentContract(contract: Json): string {
  const doc = new YAML.Document(contract);
  doc.commentBefore = AGENT_CONTRACT_HEADER;
  return doc.toString({ lineWidth: 0 });
}

/** The agent contract the current full documents produce, as text. */
export function generateAgentContract(dir: string = OPENAPI_DIR, version = packageVersion()): string {
  const sources = new Map<string, unknown>();
  for (const file of fullDocumentFiles(dir)) sources.set(file, YAML.parse(readFileSync(file, 'utf8')));
  return renderAgentContract(buildAgentContract(sources, { version }));
}

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
