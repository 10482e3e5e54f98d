/**
 * The settings the manifests give the pods, held to what the apps really read: every variable a pod
 * of the service gets is one the code reads (and the ones a pod cannot do without are set); kept
 * pages are written where the API reads them; /metrics is scraped where and how the apps serve it;
 * webhook deliveries always have a worker; the workers' memory follows the browser benchmark.
 */
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { loadEnv as apiEnv } from "@serp/api/env";
import { loadEnv as workerEnv } from "@serp/worker/env";
import { BROWSER_DEFAULTS } from "@serp/upstream";
import { ROOT } from "../ops/support.js";
import { settingsReadByCode } from "../support/settings-read.js";
import { OVERLAYS, componentOf, envOf, kubectlAvailable, matches, named, podOf, render, serviceWorkloads, type K8sObject, type Overlay } from "./support.js";

/** Variables a pod gets that are not settings of the apps, and who reads them. */
const NOT_SETTINGS: Record<string, string> = { HOME: "Chromium (its profile and crash files go under it)" };
/** The images' working directory (Dockerfile WORKDIR): relative paths in settings resolve against it. */
const WORKDIR = "/app";

/** A pod's settings as its app reads them (the app's own schema: defaults filled in, values checked). */
function settingsOf(objects: K8sObject[], w: K8sObject) {
  const env = envOf(objects, podOf(w).spec.containers[0]);
  return componentOf(w) === "api" ? { env, parsed: apiEnv(env) } : { env, parsed: workerEnv(env) };
}

/** Every variable name a container gets: its ConfigMaps' and Secrets' keys and its own entries (values or references). */
function variableNames(objects: K8sObject[], container: any): string[] {
  return [...new Set([...Object.keys(envOf(objects, container)), ...(container.env ?? []).map((e: { name: string }) => e.name)])];
}

/** Whether the NetworkPolicies selecting a pod let it open TCP connections to `port` on a public address. */
function egressAllowed(objects: K8sObject[], w: K8sObject, port: number): boolean {
  const labels = podOf(w).metadata.labels;
  return objects
    .filter((o) => o.kind === "NetworkPolicy" && o.spec.policyTypes?.includes("Egress") && matches(o.spec.podSelector.matchLabels ?? {}, labels))
    .flatMap((o) => (o.spec.egress ?? []) as { to?: { ipBlock?: { cidr: string } }[]; ports?: { port?: number }[] }[])
    .some((rule) => (!rule.ports || rule.ports.some((p) => p.port === undefined || p.port === port)) && (!rule.to || rule.to.some((t) => t.ipBlock?.cidr === "0.0.0.0/0")));
}

const d = kubectlAvailable ? describe : describe.skip;

d.each(OVERLAYS)("the %s overlay's settings", (overlay: Overlay) => {
  let objects: K8sObject[];
  let apps: K8sObject[];
  beforeAll(() => {
    objects = render(overlay);
    apps = serviceWorkloads(objects);
  });

  test("every variable a pod of the service gets is a setting the apps read", () => {
    const read = settingsReadByCode();
    const unread: string[] = [];
    for (const w of apps) {
      for (const c of podOf(w).spec.containers) {
        for (const name of variableNames(objects, c)) if (!read.has(name) && !(name in NOT_SETTINGS)) unread.push(`${w.metadata.name}: ${name}`);
      }
    }
    expect(unread).toEqual([]);
  });

  test("the settings a pod cannot do without are set: all interfaces, Redis, PostgreSQL, the public address, the health port", () => {
    const problems: string[] = [];
    for (const w of apps) {
      const { env, parsed } = settingsOf(objects, w);
      const lacks = (what: string) => problems.push(`${w.metadata.name}: ${what}`);
      // The code's default is loopback: the kubelet's probes and the Service would reach nothing.
      if (parsed.HOST !== "0.0.0.0") lacks(`HOST is ${parsed.HOST}`);
      // The defaults are a Redis on the pod's own loopback and no PostgreSQL (the ledger stays in Redis).
      if (!env.REDIS_URL && !env.REDIS_SENTINELS) lacks("neither REDIS_URL nor REDIS_SENTINELS");
      if (!parsed.DATABASE_URL) lacks("no DATABASE_URL");
      if (componentOf(w) === "api" && !env.PUBLIC_BASE_URL) lacks("no PUBLIC_BASE_URL");
      if (componentOf(w) === "worker" && !env.HEALTH_PORT) lacks("no HEALTH_PORT (no probes, no /metrics)");
    }
    expect(problems).toEqual([]);
  });

  test("kept pages: the workers write them where the API reads them (one volume on a single node, a bucket in production)", () => {
    const stores = new Map<string, string>();
    const problems: string[] = [];
    for (const w of apps) {
      const { parsed } = settingsOf(objects, w);
      const pod = podOf(w);
      const [c] = pod.spec.containers;
      if (parsed.RAW_PAGES_S3_BUCKET) {
        stores.set(w.metadata.name, `bucket ${parsed.RAW_PAGES_S3_ENDPOINT ?? "AWS"} ${parsed.RAW_PAGES_S3_BUCKET}/${parsed.RAW_PAGES_S3_PREFIX}`);
        continue;
      }
      // The folder: on a volume mounted at (or above) RAW_PAGES_DIR, the same claim in every pod.
      const dir = posix.resolve(WORKDIR, parsed.RAW_PAGES_DIR);
      const mount = (c.volumeMounts ?? []).find((m: any) => dir === m.mountPath || dir.startsWith(`${m.mountPath}/`));
      const claim = pod.spec.volumes?.find((v: any) => v.name === mount?.name)?.persistentVolumeClaim?.claimName;
      if (!claim) {
        problems.push(`${w.metadata.name}: RAW_PAGES_DIR ${dir} is on no persistent volume (the root filesystem is read-only)`);
        continue;
      }
      if (componentOf(w) === "worker" && mount.readOnly) problems.push(`${w.metadata.name}: the workers write pages, but ${mount.mountPath} is read-only`);
      const pvc = named(objects, "PersistentVolumeClaim", claim);
      if (!pvc) problems.push(`${w.metadata.name}: no PersistentVolumeClaim ${claim}`);
      // Pods on several nodes share a volume only when it is ReadWriteMany; on one node ReadWriteOnce serves them all.
      else if (overlay !== "single-node" && !pvc.spec.accessModes.includes("ReadWriteMany")) problems.push(`PersistentVolumeClaim ${claim}: not ReadWriteMany`);
      stores.set(w.metadata.name, `folder ${claim} ${posix.relative(mount.mountPath, dir)}`);
    }
    expect(problems).toEqual([]);
    expect(new Set(stores.values()).size).toBe(1);
    expect([...stores.keys()].sort()).toEqual(apps.map((w) => w.metadata.name).sort());
    // A bucket must be reachable from every pod that reads or writes pages.
    for (const w of apps) {
      const { parsed } = settingsOf(objects, w);
      if (!parsed.RAW_PAGES_S3_BUCKET) continue;
      const endpoint = new URL(parsed.RAW_PAGES_S3_ENDPOINT ?? "https://s3.amazonaws.com");
      const port = Number(endpoint.port || (endpoint.protocol === "https:" ? 443 : 80));
      expect({ [w.metadata.name]: egressAllowed(objects, w, port) }).toEqual({ [w.metadata.name]: true });
    }
    // Production runs API and worker pods on any number of nodes: a bucket, from the Secret.
    if (overlay === "production") {
      expect([...stores.values()][0]).toMatch(/^bucket /);
      const [c] = podOf(apps[0]!).spec.containers;
      const secretKeys = (c.envFrom as { secretRef?: { name: string } }[]).flatMap((f) => Object.keys((f.secretRef && named(objects, "Secret", f.secretRef.name)?.data) ?? {}));
      expect(secretKeys).toEqual(expect.arrayContaining(["RAW_PAGES_S3_BUCKET", "RAW_PAGES_S3_ACCESS_KEY_ID", "RAW_PAGES_S3_SECRET_ACCESS_KEY"]));
    }
  });

  test("the workers' memory follows the browser benchmark: pages recycled below the limit, the request covers pages and process", () => {
    const measured = browserPageMb();
    expect(measured.size).toBeGreaterThanOrEqual(2);
    for (const w of apps.filter((a) => componentOf(a) === "worker")) {
      const [c] = podOf(w).spec.containers;
      const parsed = workerEnv(envOf(objects, c));
      if (parsed.BROWSER_CDP_URL || parsed.BROWSER_WS_ENDPOINT) continue;
      const pages = parsed.BROWSER_CONCURRENCY ?? BROWSER_DEFAULTS.concurrency;
      const recycleAt = parsed.BROWSER_MAX_RSS_MB ?? BROWSER_DEFAULTS.maxRssMb;
      // The figure at the largest measured concurrency not above the pod's (fewer pages cost more each).
      const at = Math.max(...[...measured.keys()].filter((n) => n <= pages));
      const pagesMb = pages * measured.get(at)!;
      const sizes = {
        pool: w.metadata.name,
        pagesBelowRecycling: pagesMb < recycleAt,
        recyclingBelowLimit: recycleAt + WORKER_PROCESS_MB < quantityMb(c.resources.limits.memory),
        requestCoversPagesAndProcess: pagesMb + WORKER_PROCESS_MB <= quantityMb(c.resources.requests.memory),
      };
      expect(sizes).toEqual({ pool: w.metadata.name, pagesBelowRecycling: true, recyclingBelowLimit: true, requestCoversPagesAndProcess: true });
    }
  });

  test("webhook deliveries always have a worker: the pools serve the webhooks queue, and one never scales to zero", () => {
    // Deliveries are a queue of their own, served inside the worker pods (WEBHOOK_WORKER), not by a pool of their own.
    const pools = apps.filter((w) => componentOf(w) === "worker");
    const minimum = (w: K8sObject) => objects.find((o) => o.kind === "ScaledObject" && o.spec.scaleTargetRef.name === w.metadata.name)?.spec.minReplicaCount ?? w.spec.replicas ?? 1;
    const serving = pools.filter((w) => workerEnv(envOf(objects, podOf(w).spec.containers[0])).WEBHOOK_WORKER);
    expect(serving.map((w) => w.metadata.name)).toEqual(pools.map((w) => w.metadata.name));
    expect(Math.max(...serving.map(minimum))).toBeGreaterThanOrEqual(1);
  });
});

/**
 * A worker process's own memory beside its browser: its resident size once ready with one parse
 * thread, measured with the apps run as `npm start` runs them (tsx, so above the bundled image's):
 * 304 MB (docs/OPERATIONS-K8S.md, "Sizing").
 */
const WORKER_PROCESS_MB = 304;
const MB_PER_MIB = 1.048576;

/** Memory in MB from a Kubernetes quantity (Mi or Gi). */
function quantityMb(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`unexpected quantity ${q}`);
  return Number(m[1]) * (m[2] === "Gi" ? 1024 : 1) * MB_PER_MIB;
}

/** docs/BENCHMARKS.md §7: a browser page's memory (PSS) at each measured concurrency. */
function browserPageMb(): Map<number, number> {
  const text = readFileSync(join(ROOT, "docs/BENCHMARKS.md"), "utf8");
  return new Map([...text.matchAll(/^\| 7\. browser page, concurrency (\d+): memory \(PSS\) per concurrent page \| (\d+) MB \|/gm)].map((m) => [Number(m[1]), Number(m[2])]));
}

/** Where and how a pod's app serves /metrics, as its settings say: the API on METRICS_PORT (else on its own PORT), a worker beside its probes on HEALTH_PORT; behind METRICS_TOKEN when set. */
function metricsServedBy(objects: K8sObject[], w: K8sObject): { port: number | undefined; token: string | undefined } {
  const env = envOf(objects, podOf(w).spec.containers[0]);
  if (componentOf(w) === "api") {
    const parsed = apiEnv(env);
    return { port: parsed.METRICS_PORT ?? parsed.PORT, token: parsed.METRICS_TOKEN };
  }
  const parsed = workerEnv(env);
  return { port: parsed.HEALTH_PORT, token: parsed.METRICS_TOKEN };
}

/** The value of a Secret key a ServiceMonitor endpoint names, decoded. */
function secretValue(objects: K8sObject[], ref: { name: string; key: string } | undefined): string | undefined {
  const data = ref && named(objects, "Secret", ref.name)?.data?.[ref.key];
  return data === undefined ? undefined : Buffer.from(data.replace(/\s+/g, ""), "base64").toString("utf8");
}

const VARIANTS = [
  ["single-node with the keda and monitoring components", () => render("single-node", { withComponents: true })],
  ["production", () => render("production")],
] as const;

d.each(VARIANTS)("/metrics in %s", (_variant, renderIt) => {
  let objects: K8sObject[];
  let apps: K8sObject[];
  beforeAll(() => {
    objects = renderIt();
    apps = serviceWorkloads(objects);
  });

  test("every ServiceMonitor scrapes the port and path where its pods serve /metrics, with the token they require", () => {
    const monitors = objects.filter((o) => o.kind === "ServiceMonitor");
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual(["serp-api", "serp-workers"]);
    const problems: string[] = [];
    const scraped = new Set<string>();
    for (const m of monitors) {
      for (const e of m.spec.endpoints) {
        for (const service of objects.filter((o) => o.kind === "Service" && matches(m.spec.selector.matchLabels, o.metadata.labels))) {
          const port = service.spec.ports.find((p: { name: string }) => p.name === e.port);
          for (const w of apps.filter((a) => matches(service.spec.selector, podOf(a).metadata.labels))) {
            const [c] = podOf(w).spec.containers;
            const target = typeof port?.targetPort === "number" ? port.targetPort : c.ports.find((p: { name: string }) => p.name === port?.targetPort)?.containerPort;
            const served = metricsServedBy(objects, w);
            const where = `${m.metadata.name} → ${w.metadata.name}`;
            if (target === undefined || target !== served.port) problems.push(`${where}: scrapes port ${target}, /metrics is on ${served.port}`);
            if (e.path !== "/metrics") problems.push(`${where}: path ${e.path}`);
            const sent = secretValue(objects, e.authorization?.credentials ?? e.bearerTokenSecret);
            if (sent !== served.token) problems.push(`${where}: sends ${sent ? "a token" : "no token"}, the pod requires ${served.token ? "a different one" : "none"}`);
            scraped.add(w.metadata.name);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect([...scraped].sort()).toEqual(apps.map((a) => a.metadata.name).sort());
    // /metrics is closed: every pod requires a token, and the API's public port does not serve it.
    for (const w of apps) expect({ [w.metadata.name]: Boolean(metricsServedBy(objects, w).token) }).toEqual({ [w.metadata.name]: true });
    const api = apps.find((w) => componentOf(w) === "api")!;
    expect(metricsServedBy(objects, api).port).not.toBe(apiEnv(envOf(objects, podOf(api).spec.containers[0])).PORT);
  });

  test("the NetworkPolicies let Prometheus, from the monitoring namespace, reach every pod's metrics port", () => {
    const blocked: string[] = [];
    for (const w of apps) {
      const { port } = metricsServedBy(objects, w);
      const rules = objects
        .filter((o) => o.kind === "NetworkPolicy" && o.spec.policyTypes?.includes("Ingress") && matches(o.spec.podSelector.matchLabels ?? {}, podOf(w).metadata.labels))
        .flatMap((o) => (o.spec.ingress ?? []) as { from?: { namespaceSelector?: { matchLabels?: Record<string, string> } }[]; ports?: { port?: number }[] }[]);
      const open = rules.some(
        (r) =>
          (!r.ports || r.ports.some((p) => p.port === port)) &&
          (!r.from || r.from.some((f) => f.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === "monitoring")),
      );
      if (!open) blocked.push(`${w.metadata.name}: port ${port}`);
    }
    expect(blocked).toEqual([]);
  });
});

describe("the production Secret's optional settings (commented out in secrets.env)", () => {
  const file = readFileSync(join(ROOT, "deploy/k8s/overlays/production/secrets.env"), "utf8");
  const entries = (re: RegExp) => Object.fromEntries([...file.matchAll(re)].map((m) => [m[1]!, m[2]!]));
  const active = entries(/^([A-Z][A-Z0-9_]*)=(.*)$/gm);
  const optional = entries(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm);

  test("names Redis Sentinel and the S3-compatible endpoint, each a setting the apps read", () => {
    expect(Object.keys(optional)).toEqual(expect.arrayContaining(["REDIS_SENTINELS", "REDIS_SENTINEL_NAME", "REDIS_WAIT_REPLICAS", "RAW_PAGES_S3_ENDPOINT"]));
    const read = settingsReadByCode();
    expect(Object.keys(optional).filter((k) => !read.has(k))).toEqual([]);
  });

  test("uncommented, they are a configuration both apps accept, and it takes Redis through the sentinels", () => {
    const env = { ...active, ...optional };
    const api = apiEnv(env);
    expect(() => workerEnv({ ...env, HEALTH_PORT: "9100" })).not.toThrow();
    expect(api.REDIS_SENTINELS?.length).toBe(3);
    expect(api.REDIS_WAIT_REPLICAS).toBe(1);
    expect(api.RAW_PAGES_S3_ENDPOINT).toBe(optional.RAW_PAGES_S3_ENDPOINT);
  });
});
