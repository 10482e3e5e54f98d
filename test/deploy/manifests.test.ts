/**
 * The Kubernetes manifests (deploy/k8s) as `kubectl kustomize` renders each overlay: every object
 * valid against the Kubernetes, KEDA and prometheus-operator schemas (kubernetes-models, offline);
 * every ConfigMap, Secret and Service a workload names present; every selector finding its pods;
 * the pods' environment accepted by the apps' own settings schemas; grace periods above the apps'
 * own shutdown bounds; the profile table and proxies mounted so that hot reload works.
 */
import { readFileSync } from "node:fs";
import * as k8s from "kubernetes-models";
import { kedaSh } from "@kubernetes-models/keda";
import { monitoringCoreosCom } from "@kubernetes-models/prometheus-operator";
import { loadEnv as apiEnv } from "@serp/api/env";
import { loadEnv as workerEnv } from "@serp/worker/env";
import { apiShutdownBounds } from "../../apps/api/src/ops/http-shutdown.js";
import { workerShutdownBounds } from "../../apps/worker/src/drain.js";
import { QUEUES } from "@serp/shared";
import { parseExitsConfig, profileTable, shippedProfilesFile } from "@serp/upstream";
import { OVERLAYS, envOf, kubectlAvailable, matches, named, podOf, render, workloads, type K8sObject, type Overlay, type Pod } from "./support.js";

interface Model {
  apiVersion: string;
  kind: string;
  new (data: object): { validate(): void };
}

/** Every model class the three packages declare, by `apiVersion kind`. */
function modelsOf(...modules: object[]): Map<string, Model> {
  const found = new Map<string, Model>();
  const walk = (o: object, depth: number) => {
    for (const value of Object.values(o)) {
      if (typeof value === "function" && typeof value.apiVersion === "string" && typeof value.kind === "string") {
        found.set(`${value.apiVersion} ${value.kind}`, value as Model);
      } else if (value && typeof value === "object" && depth < 3) walk(value, depth + 1);
    }
  };
  for (const m of modules) walk(m, 0);
  return found;
}
const MODELS = modelsOf(k8s, kedaSh, monitoringCoreosCom);

/** The ConfigMaps and Secrets a pod names (unless optional), as `Kind name` with where. */
function referencesOf(pod: Pod): { ref: string; where: string }[] {
  const refs: { ref: string; where: string }[] = [];
  for (const v of pod.spec.volumes ?? []) {
    if (v.configMap && !v.configMap.optional) refs.push({ ref: `ConfigMap ${v.configMap.name}`, where: `volume ${v.name}` });
    if (v.secret && !v.secret.optional) refs.push({ ref: `Secret ${v.secret.secretName}`, where: `volume ${v.name}` });
  }
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    for (const f of c.envFrom ?? []) {
      if (f.configMapRef && !f.configMapRef.optional) refs.push({ ref: `ConfigMap ${f.configMapRef.name}`, where: `${c.name} envFrom` });
      if (f.secretRef && !f.secretRef.optional) refs.push({ ref: `Secret ${f.secretRef.name}`, where: `${c.name} envFrom` });
    }
    for (const e of c.env ?? []) {
      const cm = e.valueFrom?.configMapKeyRef;
      const s = e.valueFrom?.secretKeyRef;
      if (cm && !cm.optional) refs.push({ ref: `ConfigMap ${cm.name}`, where: `${c.name} env ${e.name}` });
      if (s && !s.optional) refs.push({ ref: `Secret ${s.name}`, where: `${c.name} env ${e.name}` });
    }
  }
  return refs;
}

/** The host of a URL setting, when it is a bare name (a Service in the namespace) rather than an outside address. */
function serviceHost(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const host = new URL(url).hostname;
  return host.includes(".") ? undefined : host;
}

/**
 * The object as the API server reads it: kustomize folds a long Secret value's base64 over lines,
 * which Go's base64 decoder skips and the schema's `byte` format does not.
 */
function asSent(o: K8sObject): K8sObject {
  if (o.kind !== "Secret" || !o.data) return o;
  return { ...o, data: Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, v.replace(/\s+/g, "")])) };
}

const d = kubectlAvailable ? describe : describe.skip;

d.each(OVERLAYS)("the %s overlay", (overlay: Overlay) => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = render(overlay);
  });

  test("renders, and every object is valid against its Kubernetes, KEDA or prometheus-operator schema", () => {
    expect(objects.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const o of objects) {
      const Model = MODELS.get(`${o.apiVersion} ${o.kind}`);
      if (!Model) {
        problems.push(`${o.apiVersion} ${o.kind} ${o.metadata.name}: no schema`);
        continue;
      }
      try {
        new Model(asSent(o)).validate();
      } catch (err) {
        problems.push(`${o.kind} ${o.metadata.name}: ${(err as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
    // Every object lands in the overlay's namespace, which the overlay also creates.
    expect(objects.filter((o) => o.kind !== "Namespace" && o.metadata.namespace !== "serp").map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([]);
    expect(named(objects, "Namespace", "serp")).toBeDefined();
  });

  test("every ConfigMap, Secret and Service a workload names exists in the overlay", () => {
    const have = new Set(objects.map((o) => `${o.kind} ${o.metadata.name}`));
    const missing: string[] = [];
    for (const w of workloads(objects)) {
      for (const { ref, where } of referencesOf(podOf(w))) if (!have.has(ref)) missing.push(`${w.kind} ${w.metadata.name} (${where}): ${ref}`);
      if (w.kind === "StatefulSet" && !have.has(`Service ${w.spec.serviceName}`)) missing.push(`StatefulSet ${w.metadata.name}: Service ${w.spec.serviceName}`);
      // Redis and PostgreSQL named by a bare host are Services of the overlay (single-node); outside addresses have dots.
      for (const c of podOf(w).spec.containers) {
        const env = envOf(objects, c);
        for (const setting of ["REDIS_URL", "DATABASE_URL"]) {
          const host = serviceHost(env[setting]);
          if (host && !have.has(`Service ${host}`)) missing.push(`${w.metadata.name} ${setting}: Service ${host}`);
        }
      }
    }
    expect(missing).toEqual([]);
    const apps = workloads(objects).filter((w) => w.metadata.labels?.["app.kubernetes.io/name"] === "serp");
    const env = envOf(objects, podOf(apps[0]!).spec.containers[0]);
    if (overlay === "single-node") {
      expect([serviceHost(env.REDIS_URL), serviceHost(env.DATABASE_URL)]).toEqual(["redis", "postgres"]);
    } else {
      // Production reaches storage outside the cluster and runs none of its own.
      expect(objects.filter((o) => o.kind === "StatefulSet")).toEqual([]);
      expect([serviceHost(env.REDIS_URL), serviceHost(env.DATABASE_URL)]).toEqual([undefined, undefined]);
    }
  });

  test("every selector finds its pods: Services (and their ports), budgets, network policies, monitors and autoscalers", () => {
    const pods = workloads(objects).map((w) => ({ name: w.metadata.name, kind: w.kind, pod: podOf(w) }));
    const podsOf = (selector: Record<string, string>) => pods.filter((p) => matches(selector, p.pod.metadata.labels));
    const problems: string[] = [];
    for (const w of workloads(objects)) {
      if (!matches(w.spec.selector.matchLabels, podOf(w).metadata.labels)) problems.push(`${w.metadata.name}: its selector misses its own pods`);
    }
    for (const s of objects.filter((o) => o.kind === "Service")) {
      const found = podsOf(s.spec.selector);
      if (!found.length) problems.push(`Service ${s.metadata.name}: no pods`);
      for (const port of s.spec.ports) {
        const named = found.every((p) => p.pod.spec.containers.some((c: any) => (c.ports ?? []).some((cp: any) => cp.name === port.targetPort || cp.containerPort === port.targetPort)));
        if (!named) problems.push(`Service ${s.metadata.name}: targetPort ${port.targetPort} not on every pod`);
      }
    }
    for (const b of objects.filter((o) => o.kind === "PodDisruptionBudget")) {
      if (!podsOf(b.spec.selector.matchLabels).length) problems.push(`PodDisruptionBudget ${b.metadata.name}: no pods`);
    }
    for (const n of objects.filter((o) => o.kind === "NetworkPolicy")) {
      if (!podsOf(n.spec.podSelector.matchLabels ?? {}).length) problems.push(`NetworkPolicy ${n.metadata.name}: no pods`);
    }
    for (const m of objects.filter((o) => o.kind === "ServiceMonitor")) {
      const services = objects.filter((o) => o.kind === "Service" && matches(m.spec.selector.matchLabels, o.metadata.labels));
      if (!services.length) problems.push(`ServiceMonitor ${m.metadata.name}: no Service`);
      for (const e of m.spec.endpoints) {
        if (!services.every((s) => s.spec.ports.some((p: any) => p.name === e.port))) problems.push(`ServiceMonitor ${m.metadata.name}: port ${e.port} not on its Services`);
      }
    }
    for (const a of objects.filter((o) => o.kind === "HorizontalPodAutoscaler" || o.kind === "ScaledObject")) {
      if (!named(objects, "Deployment", a.spec.scaleTargetRef.name)) problems.push(`${a.kind} ${a.metadata.name}: no Deployment ${a.spec.scaleTargetRef.name}`);
    }
    expect(problems).toEqual([]);
  });

  test("the pods' settings pass the apps' own schemas, and each queue has exactly one worker pool", () => {
    const queues: string[] = [];
    for (const w of workloads(objects)) {
      const component = w.metadata.labels?.["app.kubernetes.io/component"];
      for (const c of podOf(w).spec.containers) {
        const env = envOf(objects, c);
        if (component === "api") {
          expect(() => apiEnv(env)).not.toThrow();
          expect(env.HOST).toBe("0.0.0.0");
        }
        if (component === "worker") {
          const parsed = workerEnv(env);
          queues.push(...parsed.WORKER_QUEUES);
          expect(parsed.HEALTH_PORT).toBe(9100);
          expect(c.ports.map((p: any) => p.containerPort)).toContain(parsed.HEALTH_PORT);
        }
      }
    }
    expect(queues.sort()).toEqual([...QUEUES].sort());
  });

  test("the worker pools share one pod template: they differ only in their queue (and the live pool's canary)", () => {
    const pools = objects.filter((o) => o.kind === "Deployment" && o.metadata.labels?.["app.kubernetes.io/component"] === "worker");
    expect(pools).toHaveLength(QUEUES.length);
    const common = (o: K8sObject) => {
      const c = structuredClone(o);
      for (const labels of [c.metadata.labels, c.spec.selector.matchLabels, c.spec.template.metadata.labels]) delete labels["serp.dev/queue"];
      delete (c.metadata as { name?: string }).name;
      delete c.spec.replicas;
      const [container] = c.spec.template.spec.containers;
      container.env = container.env.filter((e: { name: string }) => !["WORKER_QUEUES", "CANARY_INTERVAL_MS"].includes(e.name));
      return JSON.stringify(c);
    };
    expect(new Set(pools.map(common)).size).toBe(1);
    expect(pools.map((p) => p.metadata.labels!["serp.dev/queue"])).toEqual(pools.map((p) => envOf(objects, podOf(p).spec.containers[0]).WORKER_QUEUES));
  });

  test("grace periods outlast each app's own shutdown bound, and every container has requests and limits", () => {
    for (const w of workloads(objects).filter((o) => o.metadata.labels?.["app.kubernetes.io/name"] === "serp")) {
      const pod = podOf(w);
      const [c] = pod.spec.containers;
      const env = envOf(objects, c);
      const grace: number = pod.spec.terminationGracePeriodSeconds;
      // The apps' own bounds (the functions their index.ts stop with), from the pod's settings as
      // each app reads them (defaults included); the API's SIGTERM comes after the preStop pause.
      const preStop = Number(c.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
      const bound =
        c.name === "api"
          ? preStop + apiShutdownBounds(apiEnv(env).LIVE_DEADLINE_MS).exitAfterMs / 1000
          : workerShutdownBounds(workerEnv(env).WORKER_SHUTDOWN_TIMEOUT_MS).exitAfterMs / 1000;
      expect({ name: w.metadata.name, bound: Number.isFinite(bound) && bound > 0, graceAbove: grace > bound }).toEqual({ name: w.metadata.name, bound: true, graceAbove: true });
    }
    for (const w of workloads(objects)) {
      for (const c of podOf(w).spec.containers) {
        expect({ [c.name]: [c.resources?.requests?.cpu, c.resources?.requests?.memory, c.resources?.limits?.memory].every(Boolean) }).toEqual({ [c.name]: true });
      }
    }
  });

  test("the profile table and the proxy pools are mounted as whole directories (hot reload) at the paths the settings name", () => {
    const profiles = named(objects, "ConfigMap", "serp-upstream-profiles")!;
    // No hash suffix: the ConfigMap is updated in place, so the mounted file changes under the workers.
    expect(profiles).toBeDefined();
    expect(profiles.data!["profiles.json"]).toBe(readFileSync(shippedProfilesFile(), "utf8"));
    expect(() => profileTable(JSON.parse(profiles.data!["profiles.json"]!))).not.toThrow();
    const proxies = named(objects, "Secret", "serp-upstream-proxies");
    expect(proxies).toBeDefined();

    for (const w of workloads(objects).filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "worker")) {
      const pod = podOf(w);
      const [c] = pod.spec.containers;
      const env = envOf(objects, c);
      const mountOf = (volume: (v: any) => boolean) => {
        const v = pod.spec.volumes.find(volume);
        return c.volumeMounts.find((m: any) => m.name === v?.name);
      };
      const profilesMount = mountOf((v) => v.configMap?.name === "serp-upstream-profiles");
      const proxiesMount = mountOf((v) => v.secret?.secretName === "serp-upstream-proxies");
      // A subPath mount never sees a changed ConfigMap or Secret.
      expect([profilesMount?.subPath, proxiesMount?.subPath]).toEqual([undefined, undefined]);
      expect(env.UPSTREAM_PROFILES_FILE).toBe(`${profilesMount.mountPath}/profiles.json`);
      if (env.UPSTREAM_PROXIES_FILE) {
        expect(env.UPSTREAM_PROXIES_FILE).toBe(`${proxiesMount.mountPath}/proxies.json`);
        const file = Buffer.from(proxies!.data!["proxies.json"]!, "base64").toString("utf8");
        expect(parseExitsConfig(file).pools.length).toBeGreaterThan(0);
      }
    }
    if (overlay === "production") {
      expect(Object.keys(proxies!.data ?? {})).toEqual(["proxies.json"]);
    }
  });

  test("the API scales on CPU; in production each worker pool has one ScaledObject on Prometheus and no fixed replica count", () => {
    const hpa = named(objects, "HorizontalPodAutoscaler", "serp-api")!;
    expect(hpa.spec.metrics).toEqual([expect.objectContaining({ type: "Resource", resource: expect.objectContaining({ name: "cpu" }) })]);
    const scaled = objects.filter((o) => o.kind === "ScaledObject");
    const pools = objects.filter((o) => o.kind === "Deployment" && o.metadata.labels?.["app.kubernetes.io/component"] === "worker");
    if (overlay === "single-node") {
      expect(scaled).toEqual([]);
      return;
    }
    expect(scaled.map((s) => s.spec.scaleTargetRef.name).sort()).toEqual(pools.map((p) => p.metadata.name).sort());
    for (const p of pools) expect({ [p.metadata.name]: p.spec.replicas }).toEqual({ [p.metadata.name]: undefined });
    for (const s of scaled) {
      expect(s.spec.minReplicaCount).toBeLessThanOrEqual(s.spec.maxReplicaCount);
      for (const t of s.spec.triggers) {
        expect(t.type).toBe("prometheus");
        // The series come from this overlay's namespace.
        expect(t.metadata.query).toContain(`namespace="${s.metadata.namespace}"`);
        expect(Number(t.metadata.threshold)).toBeGreaterThan(0);
      }
    }
    // The live pool also scales on its oldest waiting job's age, and keeps warm pods.
    const live = named(objects, "ScaledObject", "serp-worker-live")!;
    expect(live.spec.triggers.map((t: any) => t.metadata.query).join("\n")).toContain("serp_queue_oldest_waiting_age_seconds");
    expect(live.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
  });
});
