/**
 * The Kubernetes manifests as `kubectl kustomize` renders them (offline), and the PromQL the
 * deployment files hold (the KEDA queries, the alert rules).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, parseAllDocuments, stringify } from "yaml";
import { ROOT } from "../ops/support.js";

export const OVERLAYS = ["single-node", "production"] as const;
export type Overlay = (typeof OVERLAYS)[number];

export const kubectlAvailable = spawnSync("kubectl", ["version", "--client"], { stdio: "ignore" }).status === 0;
if (!kubectlAvailable) console.warn("deploy tests skipped: no kubectl to render the kustomize overlays");

/** A rendered object: what the tests read of it, the rest left loose. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

export type Pod = { spec: any; metadata: { labels: Record<string, string> } };
const WORKLOADS = ["Deployment", "StatefulSet"];
export const workloads = (objects: K8sObject[]) => objects.filter((o) => WORKLOADS.includes(o.kind));
export const podOf = (o: K8sObject): Pod => o.spec.template as Pod;
export const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
export const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) => Object.entries(selector).every(([k, v]) => labels[k] === v);
/** The workloads of the service itself (the API and the worker pools), not the trial's Redis and PostgreSQL. */
export const serviceWorkloads = (objects: K8sObject[]) => workloads(objects).filter((o) => o.metadata.labels?.["app.kubernetes.io/name"] === "serp");
export const componentOf = (o: K8sObject) => o.metadata.labels?.["app.kubernetes.io/component"];

/** What a container's environment holds: its ConfigMaps' and Secrets' keys (decoded), then its own values. */
export function envOf(objects: K8sObject[], container: any): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, named(objects, "ConfigMap", from.configMapRef.name)?.data);
    if (from.secretRef) {
      const secret = named(objects, "Secret", from.secretRef.name);
      for (const [k, v] of Object.entries(secret?.data ?? {})) env[k] = Buffer.from(v, "base64").toString("utf8");
    }
  }
  for (const e of container.env ?? []) if (typeof e.value === "string") env[e.name] = e.value;
  return env;
}

/** The components an overlay may add (the single-node trial names them in a comment, production uses both). */
export const COMPONENTS = ["keda", "monitoring"] as const;

/**
 * `kubectl kustomize deploy/k8s/overlays/<overlay>`, one object per YAML document. With
 * `withComponents`, a copy of the tree whose overlay also lists every component, as
 * docs/OPERATIONS-K8S.md tells a trial whose cluster runs KEDA and the prometheus-operator.
 */
export function render(overlay: Overlay, o: { withComponents?: boolean } = {}): K8sObject[] {
  let text: string;
  if (!o.withComponents) text = execFileSync("kubectl", ["kustomize", join(ROOT, "deploy/k8s/overlays", overlay)], { encoding: "utf8" });
  else {
    const tree = mkdtempSync(join(tmpdir(), "serp-k8s-"));
    try {
      cpSync(join(ROOT, "deploy/k8s"), tree, { recursive: true });
      const file = join(tree, "overlays", overlay, "kustomization.yaml");
      const k = parse(readFileSync(file, "utf8")) as { components?: string[] };
      k.components = [...new Set([...(k.components ?? []), ...COMPONENTS.map((c) => `../../components/${c}`)])];
      writeFileSync(file, stringify(k));
      text = execFileSync("kubectl", ["kustomize", join(tree, "overlays", overlay)], { encoding: "utf8" });
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  }
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** The KEDA Prometheus triggers' queries of an overlay, by ScaledObject and trigger. */
export function kedaQueries(objects: readonly K8sObject[]): { where: string; query: string }[] {
  return objects
    .filter((o) => o.kind === "ScaledObject")
    .flatMap((o) =>
      (o.spec.triggers as { type: string; name?: string; metadata: { query?: string } }[])
        .filter((t) => t.type === "prometheus")
        .map((t) => ({ where: `ScaledObject ${o.metadata.name} trigger ${t.name ?? "?"}`, query: t.metadata.query ?? "" })),
    );
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** deploy/prometheus/alerts.yaml, parsed. */
export function alertRules(): { groups: { name: string; rules: AlertRule[] }[] } {
  return parse(readFileSync(join(ROOT, "deploy/prometheus/alerts.yaml"), "utf8")) as { groups: { name: string; rules: AlertRule[] }[] };
}

/** The service's metric names a PromQL expression reads: every `serp_` identifier (label names never start so). */
export function metricNames(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\bserp_[a-z0-9_]+/g)].map((m) => m[0]))];
}
