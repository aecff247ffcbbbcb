/**
 * The Kubernetes manifests (deploy/, kustomize) and compose.yaml, rendered and read as a
 * platform team's admission checks would: `kubectl kustomize` must render both directories,
 * and the rendered objects must have probes, limits, a restrictive securityContext, pinned
 * images, and configuration the processes accept (run through the real loadConfig).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { startFlags } from '../../harness/processes.ts';
import { loadConfig } from '../../lib/config.ts';
import { isPinnedImage, ROLES } from './support.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
type Obj = {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [k: string]: unknown;
};
// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are read field by field
type Any = any;

function render(dir: string): Obj[] {
  const r = spawnSync('kubectl', ['kustomize', join(root, dir)], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
}

const COMPONENTS = ['gateway', 'pricing', 'promotions', 'procurement'] as const;
/** Memory targets the processes are being brought to (RSS, MB): requests must cover them. */
const TARGET_MB = { gateway: 200, pricing: 150, promotions: 150, procurement: 150 } as const;

const mebibytes = (q: string): number => {
  const m = /^(\d+)(Mi|Gi|M|G)$/.exec(q);
  if (!m) throw new Error(`unexpected memory quantity ${q}`);
  const n = Number(m[1]);
  return { Mi: n, Gi: n * 1024, M: (n * 1e6) / 2 ** 20, G: (n * 1e9) / 2 ** 20 }[m[2] as 'Mi'];
};
const millicores = (q: string | number): number =>
  String(q).endsWith('m') ? Number.parseInt(String(q), 10) : Number(q) * 1000;

/** The V8 memory flags `npm run start:*` gives a role (defaults filled in); containers pass the same in NODE_OPTIONS. */
function memoryFlagsOf(role: 'gateway' | 'pricing' | 'promotions' | 'procurement'): string {
  const flags = startFlags(role);
  expect(flags.join(' '), `the start script of ${role} caps the heap`).toMatch(/--max-old-space-size=\d+/);
  return flags.join(' ');
}

const of = (objs: Obj[], kind: string, name: string) => {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${kind}/${name}`).toBeDefined();
  return found as Any;
};
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('the mesh example (deploy/mesh/, issue 48)', () => {
  it("slow-starts the gateway Service's new endpoints over 30 s with a balancer that supports it", () => {
    const rule = parse(readFileSync(join(root, 'deploy/mesh/istio-gateway-slow-start.yaml'), 'utf8')) as Any;
    expect(rule.kind).toBe('DestinationRule');
    const gateway = render('deploy/base').find((o) => o.kind === 'Service' && o.metadata.name === 'gateway');
    expect(rule.spec.host).toBe(gateway?.metadata.name);
    const lb = rule.spec.trafficPolicy.loadBalancer;
    // Envoy's slow start works with these two only.
    expect(['LEAST_REQUEST', 'ROUND_ROBIN']).toContain(lb.simple);
    expect(Number.parseInt(lb.warmupDurationSecs, 10)).toBeGreaterThanOrEqual(30);
  });
});

describe.each(['deploy/base', 'deploy/overlays/example'])('kubectl kustomize %s', (dir) => {
  const objs = render(dir);
  const overlay = dir.includes('overlays');

  it('renders a Deployment, a Service and a PodDisruptionBudget per role, an HPA for the gateway', () => {
    for (const c of COMPONENTS) {
      const deployment = of(objs, 'Deployment', c);
      const pods = deployment.spec.template.metadata.labels;
      expect(matches(deployment.spec.selector.matchLabels, pods)).toBe(true);
      const service = of(objs, 'Service', c);
      expect(matches(service.spec.selector, pods)).toBe(true);
      expect(service.spec.ports[0].targetPort).toBe('http');
      const pdb = of(objs, 'PodDisruptionBudget', c);
      expect(matches(pdb.spec.selector.matchLabels, pods)).toBe(true);
      // A drain can always proceed: fewer pods must stay than run.
      expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    }
    const hpa = of(objs, 'HorizontalPodAutoscaler', 'gateway');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gateway' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    if (overlay) expect(hpa.spec.minReplicas).toBe(3);
  });

  it('ramps a new gateway pod (issue 48): ready only once warm, one cold pod at a time, probed often', () => {
    const deployment = of(objs, 'Deployment', 'gateway');
    const [container] = deployment.spec.template.spec.containers;
    // /readyz is 503 `warming up` until the warm-up ran: never turned off in the cluster.
    const config = of(objs, 'ConfigMap', objs.find((o) => o.kind === 'ConfigMap')?.metadata.name ?? '');
    expect(Number(config.data.WARM_UP_MS ?? 2000)).toBeGreaterThan(0);
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.readinessProbe.periodSeconds).toBeLessThanOrEqual(2);
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    expect(deployment.spec.minReadySeconds).toBeGreaterThanOrEqual(10);
    // Shedding is on at the edge: the budgets are not turned off in the cluster's settings.
    for (const v of ['SHED_QUOTE_BUDGET_MS', 'SHED_ORDER_BUDGET_MS'])
      expect(Number(config.data[v] ?? 1), v).toBeGreaterThan(0);
  });

  it.each(COMPONENTS)(
    'runs %s from the one image with its role, probes, limits and a locked-down context',
    (c) => {
      const pod = of(objs, 'Deployment', c).spec.template.spec;
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(pod.containers).toHaveLength(1);
      const [container] = pod.containers;
      expect(ROLES).toContain(container.args[0]);
      expect(container.args).toEqual([c]);
      expect(isPinnedImage(container.image), container.image).toBe(true);
      if (overlay) expect(container.image).toBe('registry.example.com/agent-commerce:2.1.0');
      expect(container.ports).toContainEqual({ name: 'http', containerPort: 8080 });

      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      // Liveness never fails faster than readiness: a slow dependency must not restart pods.
      const window = (p: Any) => p.periodSeconds * p.failureThreshold;
      expect(window(container.livenessProbe)).toBeGreaterThan(window(container.readinessProbe));

      const { requests, limits } = container.resources;
      expect(mebibytes(requests.memory) * 2 ** 20).toBeGreaterThanOrEqual(TARGET_MB[c] * 1e6);
      expect(mebibytes(limits.memory)).toBeGreaterThan(mebibytes(requests.memory));
      expect(millicores(limits.cpu)).toBeGreaterThanOrEqual(millicores(requests.cpu));

      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
      // A read-only root leaves DATA_DIR and /tmp as the only writable places: both mounted.
      const mounts = container.volumeMounts.map((m: Any) => m.mountPath);
      expect(mounts).toEqual(expect.arrayContaining(['/data', '/tmp']));
    },
  );

  it('renders the SLO rules and alerts as a PrometheusRule (the groups of deploy/prometheus/rules.yaml, each alert with a severity and a runbook) and a PodMonitor of every role', () => {
    const rule = of(objs, 'PrometheusRule', 'agent-commerce');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    if (overlay) expect(rule.metadata.namespace).toBe('agent-commerce');
    const file = parse(readFileSync(join(root, 'deploy/prometheus/rules.yaml'), 'utf8')) as Any;
    expect(rule.spec.groups).toEqual(file.groups);
    const alerts = rule.spec.groups.flatMap((g: Any) => g.rules).filter((r: Any) => r.alert);
    // The PodMonitor scrapes every role's pods on their `http` port: the rules have data.
    const monitor = of(objs, 'PodMonitor', 'agent-commerce');
    expect(monitor.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({ port: 'http', path: '/metrics' }),
    ]);
    for (const c of COMPONENTS) {
      const template = of(objs, 'Deployment', c).spec.template;
      expect(matches(monitor.spec.selector.matchLabels, template.metadata.labels), c).toBe(true);
      expect(template.spec.containers[0].ports.map((p: Any) => p.name)).toContain('http');
    }
    for (const a of alerts) {
      expect(['page', 'ticket'], a.alert).toContain(a.labels.severity);
      expect(a.annotations.runbook_url, a.alert).toMatch(/^docs\/runbooks\.md#[a-z0-9-]+$/);
    }
  });

  it('gives every role configuration its process accepts; the quote-signing keys come from one Secret', () => {
    const configMap = objs.find((o) => o.kind === 'ConfigMap') as Any;
    const secret = objs.find((o) => o.kind === 'Secret') as Any;
    expect(Boolean(secret)).toBe(overlay);
    for (const c of COMPONENTS) {
      const pod = of(objs, 'Deployment', c).spec.template.spec;
      const [container] = pod.containers;
      const refs = container.envFrom.map((e: Any) => e.configMapRef?.name ?? e.secretRef?.name);
      expect(refs).toContain(configMap.metadata.name);
      if (overlay) expect(refs).toContain(secret.metadata.name);
      const secretEnv = overlay
        ? Object.fromEntries(
            Object.entries(secret.data as Record<string, string>).map(([k, v]) => [
              k,
              Buffer.from(v, 'base64').toString(),
            ]),
          )
        : {};
      const env = {
        ...configMap.data,
        ...secretEnv,
        ...Object.fromEntries(container.env.map((e: Any) => [e.name, e.value])),
      };
      expect(env.DATA_DIR).toBe('/data');
      if (overlay) {
        // The example's placeholder secret stops a process (production refuses it)…
        expect(() => loadConfig(env)).toThrow(/GATEWAY_SHARED_SECRET/);
        // …and with a real one everything else is accepted as it stands.
        const config = loadConfig({ ...env, GATEWAY_SHARED_SECRET: 'x'.repeat(48) });
        expect(config.NODE_ENV).toBe('production');
        expect(config.REDIS_CLUSTER).toBe(true);
        expect(config.PRICING_URL).toBe('http://pricing:8080');
      }
      if (c === 'gateway' || c === 'promotions') {
        const keysDir = String(env.QUOTE_TOKEN_KEYS_FILE).replace(/\/[^/]+$/, '');
        const mount = container.volumeMounts.find((m: Any) => m.mountPath === keysDir);
        expect(mount?.readOnly).toBe(true);
        const volume = pod.volumes.find((v: Any) => v.name === mount.name);
        expect(volume.secret.secretName).toBe('agent-commerce-quote-keys');
      }
      // The UCP webhook key: procurement signs, the gateway publishes: one Secret for both.
      if (c === 'gateway' || c === 'procurement') {
        const keysDir = String(env.UCP_SIGNING_KEYS_FILE).replace(/\/[^/]+$/, '');
        const mount = container.volumeMounts.find((m: Any) => m.mountPath === keysDir);
        expect(mount?.readOnly).toBe(true);
        const volume = pod.volumes.find((v: Any) => v.name === mount.name);
        expect(volume.secret.secretName).toBe('agent-commerce-ucp-keys');
      }
    }
  });
});

describe('compose.yaml', () => {
  const compose = parse(readFileSync(join(root, 'compose.yaml'), 'utf8'), { merge: true }) as Any;
  const services = compose.services as Record<string, Any>;
  const apps = Object.entries(services).filter(([, s]) => s.image?.startsWith('agent-commerce:'));

  it('runs the distributed topology: Redis, Postgres, three subgraphs, two gateways, a collector, Jaeger, Prometheus and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'gateway-1',
        'gateway-2',
        'grafana',
        'jaeger',
        'otel-collector',
        'postgres',
        'pricing',
        'procurement',
        'prometheus',
        'promotions',
        'redis',
      ].sort(),
    );
    expect(apps.map(([, s]) => s.command[0]).sort()).toEqual([
      'gateway',
      'gateway',
      'pricing',
      'procurement',
      'promotions',
    ]);
    for (const s of Object.values(services)) expect(isPinnedImage(s.image), s.image).toBe(true);
    for (const [name, s] of Object.entries(services)) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const dep of deps) expect(Object.keys(services), `${name} depends on ${dep}`).toContain(dep);
    }
  });

  it('builds the app image once and runs it read-only with DATA_DIR on a volume', () => {
    for (const [, s] of apps) {
      expect(s.build).toBe('.');
      expect(s.read_only).toBe(true);
      expect(s.volumes).toContain('app-data:/data');
      expect(s.healthcheck.test.join(' ')).toContain('/readyz');
      expect(s.environment.NODE_OPTIONS).toBe(memoryFlagsOf(s.command[0]));
    }
  });

  it('gives each app service configuration its process accepts, pointing at the compose services', () => {
    for (const [name, s] of apps) {
      const env = Object.fromEntries(
        Object.entries(s.environment as Record<string, string>).map(([k, v]) => [
          k,
          String(v).replace(/\$\{GATEWAY_SHARED_SECRET[^}]*\}/, 'a-secret-of-at-least-sixteen'),
        ]),
      );
      const config = loadConfig(env);
      for (const url of [config.DATABASE_URL, config.REDIS_URL, config.PRICING_URL, config.PROMOTIONS_URL])
        expect(Object.keys(services), `${name}: ${url}`).toContain(new URL(String(url)).hostname);
      expect(new URL(String(env.OTEL_EXPORTER_OTLP_ENDPOINT)).hostname).toBe('otel-collector');
    }
  });

  it('sends the collector traces on to Jaeger', () => {
    const mount = services['otel-collector'].volumes[0].split(':')[0];
    const file = join(root, mount);
    expect(existsSync(file)).toBe(true);
    const collector = parse(readFileSync(file, 'utf8')) as Any;
    expect(collector.service.pipelines.traces.receivers).toEqual(['otlp']);
    const exporter = collector.service.pipelines.traces.exporters.find((e: string) => e.startsWith('otlp'));
    expect(collector.exporters[exporter].endpoint).toMatch(/^jaeger:4317$/);
  });

  it('scrapes every app process with Prometheus, which loads the SLO rules (promtool check config)', () => {
    const prometheus = services.prometheus;
    const mounts = Object.fromEntries(
      (prometheus.volumes as string[]).map((v) => {
        const [host, container] = v.split(':');
        return [container, join(root, String(host))];
      }),
    );
    const configFile = mounts['/etc/prometheus/prometheus.yml'] as string;
    const config = parse(readFileSync(configFile, 'utf8')) as Any;
    const targets = config.scrape_configs.flatMap((c: Any) =>
      c.static_configs.flatMap((s: Any) => s.targets),
    );
    expect(targets.sort()).toEqual(apps.map(([name]) => `${name}:8080`).sort());
    // The rules file the config names is the one mounted there: the repository's.
    expect(config.rule_files).toEqual(['/etc/prometheus/rules.yaml']);
    expect(mounts['/etc/prometheus/rules.yaml']).toBe(join(root, 'deploy/prometheus/rules.yaml'));
    // promtool reads the config with the rules at their place on this machine.
    const copy = join(mkdtempSync(join(tmpdir(), 'ac-prometheus-')), 'prometheus.yml');
    writeFileSync(copy, stringify({ ...config, rule_files: [mounts['/etc/prometheus/rules.yaml']] }));
    const r = spawnSync('promtool', ['check', 'config', copy], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('provisions Grafana with the Prometheus data source and the dashboard, whose panels name that data source', () => {
    const grafana = services.grafana;
    const mounts = Object.fromEntries(
      (grafana.volumes as string[]).map((v) => {
        const [host, container] = v.split(':');
        return [container, join(root, String(host))];
      }),
    );
    const provisioning = mounts['/etc/grafana/provisioning'] as string;
    const sources = parse(readFileSync(join(provisioning, 'datasources/prometheus.yaml'), 'utf8')) as Any;
    const [source] = sources.datasources;
    expect(source.type).toBe('prometheus');
    expect(new URL(source.url).hostname).toBe('prometheus');
    expect(Number(new URL(source.url).port)).toBe(9090);
    const providers = parse(
      readFileSync(join(provisioning, 'dashboards/agent-commerce.yaml'), 'utf8'),
    ) as Any;
    const path = providers.providers[0].options.path as string;
    const dashboards = mounts[path] as string;
    const dashboard = JSON.parse(readFileSync(join(dashboards, 'agent-commerce.json'), 'utf8')) as Any;
    expect(dashboard.uid).toBe('agent-commerce');
    const panels = dashboard.panels.filter((p: Any) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(10);
    for (const p of panels) {
      expect(p.datasource.uid, p.title).toBe(source.uid);
      expect(p.targets.length, p.title).toBeGreaterThan(0);
    }
    expect(grafana.depends_on).toContain('prometheus');
  });
});
