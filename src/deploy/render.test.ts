// Renders every overlay of deploy/ with kubectl and checks what Kubernetes would receive: the core objects
// against their schemas, the GIE InferencePools by hand, the gateway's config through the project's own
// loader, and what the files promise each other (grace period, probes, RBAC, discovery, the picker).
// TOKENGATE_KUBECTL=<path> renders with another kubectl (e.g. 1.20, whose kustomize is v2.0.3).

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { before, describe, test } from "node:test";
import { parse as parseYaml } from "yaml";
import { formatConfigError, type GatewayConfigSet, loadConfigTexts } from "../config/index.js";
import { coreSchemaProblem } from "../testing/kube-schemas.js";
import { skipWithout } from "../testing/system-services.js";
import { endpointPickerRefOf, GIE_API_VERSION, inferencePoolProblems } from "./gie-inference-pool.js";
import { type KubeObject, objectsOf, overlayDirs, renderOverlay } from "./render.js";

const KUBECTL = process.env.TOKENGATE_KUBECTL ?? "kubectl";
const { skip } = skipWithout("kubectl");
const overlays = overlayDirs();
const LOOPBACK = ["127.0.0.1", "localhost", "::1"];

interface Probe {
  httpGet?: { path?: string; port: number | string };
  grpc?: { port: number; service?: string };
}
interface Container {
  name: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds: number } } };
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
  };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string; configMap?: { name: string } }[];
  serviceAccountName?: string;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean };
}

const podSpec = (d: KubeObject) => (d.spec as { template: { spec: PodSpec } }).template.spec;
const podLabels = (d: KubeObject) =>
  (d.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
const nsOf = (o: KubeObject) => o.metadata.namespace ?? "default";
/** The Deployments running `tokengate <command>`, with that container. */
const running = (objects: KubeObject[], command: string) =>
  objectsOf(objects, "Deployment").flatMap((d) =>
    podSpec(d)
      .containers.filter((c) => c.args?.[0] === command)
      .map((c) => ({ deployment: d, container: c })),
  );
/** The value after `--name` in a container's args. */
function flag(c: Container, name: string): string | undefined {
  const i = c.args?.indexOf(name) ?? -1;
  return i < 0 ? undefined : c.args?.[i + 1];
}
/** A container port by number or name, as a probe or a Service's targetPort names it. */
function portOf(c: Container, port: number | string | undefined): number | undefined {
  return typeof port === "number" ? port : c.ports?.find((p) => p.name === port)?.containerPort;
}
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The ConfigMap a container mounts at `path` (its --config folder), found by the volume's reference. */
function configMapAt(objects: KubeObject[], d: KubeObject, c: Container, path: string): KubeObject {
  const mount = c.volumeMounts?.find((m) => m.mountPath === path);
  assert.ok(mount, `${d.metadata.name}: nothing is mounted at ${path}`);
  const ref = podSpec(d).volumes?.find((v) => v.name === mount.name)?.configMap?.name;
  const cm = objectsOf(objects, "ConfigMap").find((o) => o.metadata.name === ref && nsOf(o) === nsOf(d));
  assert.ok(cm, `${d.metadata.name}: volume ${mount.name} names ConfigMap ${ref}, which is not rendered`);
  return cm;
}

/** The tokengate config a `tokengate gateway|epp` container reads, through the project's loader. */
function loadMounted(objects: KubeObject[], d: KubeObject, c: Container): GatewayConfigSet {
  const dir = flag(c, "--config");
  assert.ok(dir, `${d.metadata.name}: no --config`);
  const data = (configMapAt(objects, d, c, dir).data ?? {}) as Record<string, string>;
  const files = Object.fromEntries(Object.entries(data).filter(([name]) => /\.ya?ml$/.test(name)));
  const res = loadConfigTexts(files, { env: {} });
  assert.ok(
    res.ok,
    `config of ${d.metadata.name}:\n${res.ok ? "" : res.errors.map(formatConfigError).join("\n")}`,
  );
  assert.deepEqual(res.warnings.map(formatConfigError), [], "the config loads without warnings");
  return res.config;
}

function preStopSeconds(c: Container): number {
  const hook = c.lifecycle?.preStop;
  if (hook?.sleep) return hook.sleep.seconds;
  const cmd = hook?.exec?.command ?? [];
  return cmd[0] === "sleep" ? Number(cmd[1]) : 0;
}

test("deploy/overlays holds the vllm, sglang and envoy-epp overlays", () => {
  for (const name of ["vllm", "sglang", "envoy-epp"])
    assert.ok(overlays.has(name), `deploy/overlays/${name}`);
});

for (const [name, dir] of overlays) {
  describe(`deploy/overlays/${name} rendered by ${KUBECTL}`, { skip }, () => {
    let objects: KubeObject[] = [];
    let gateway: { deployment: KubeObject; container: Container };
    let config: GatewayConfigSet;
    const pools = () => objectsOf(objects, "InferencePool", GIE_API_VERSION);
    before(() => {
      objects = renderOverlay(dir, KUBECTL);
      const gateways = running(objects, "gateway");
      assert.equal(gateways.length, 1, "one Deployment runs tokengate gateway");
      gateway = gateways[0]!;
      config = loadMounted(objects, gateway.deployment, gateway.container);
    });

    test("every core object validates against its Kubernetes schema", () => {
      for (const o of objects) {
        if (o.apiVersion === GIE_API_VERSION) continue;
        assert.equal(coreSchemaProblem(o), null, `${o.kind} ${o.metadata.name}`);
      }
    });

    test("every GIE InferencePool has its required fields, ports in range and a known failureMode", () => {
      assert.ok(pools().length > 0, "the overlay defines an InferencePool");
      for (const p of pools())
        assert.deepEqual(inferencePoolProblems(p), [], `InferencePool ${p.metadata.name}`);
    });

    test("the gateway's config, from the ConfigMap mounted at --config, loads; its listeners are reachable", () => {
      assert.ok(config.pools.size > 0);
      assert.ok(!LOOPBACK.includes(config.gateway.listen.host), "listen.host is reachable from the Service");
    });

    test("terminationGracePeriodSeconds exceeds the preStop sleep plus shutdown.drainMs", () => {
      const { deployment: d, container: c } = gateway;
      const grace = podSpec(d).terminationGracePeriodSeconds ?? 30;
      const preStop = preStopSeconds(c);
      const drainMs = config.gateway.shutdown.drainMs;
      assert.ok(preStop > 0, "a preStop sleep lets the endpoints update before the drain");
      assert.ok(
        grace > preStop + drainMs / 1000,
        `grace ${grace} s ≤ preStop ${preStop} s + drainMs ${drainMs} ms`,
      );
    });

    test("readiness is GET /ready on the listener's port; liveness GET /health on a reachable listener", () => {
      const { container: c } = gateway;
      const g = config.gateway;
      assert.equal(c.readinessProbe?.httpGet?.path, "/ready");
      assert.equal(portOf(c, c.readinessProbe?.httpGet?.port), g.listen.port);
      assert.equal(c.livenessProbe?.httpGet?.path, "/health");
      const live = portOf(c, c.livenessProbe?.httpGet?.port);
      const host =
        live === g.listen.port ? g.listen.host : g.admin.separate && live === g.admin.port && g.admin.host;
      assert.ok(host && !LOOPBACK.includes(host), `liveness port ${live} is a listener the kubelet reaches`);
    });

    test("the Service sends its http port to the listener, and every selector matches a pod template", () => {
      const templates = objectsOf(objects, "Deployment").map(podLabels);
      for (const d of objectsOf(objects, "Deployment")) {
        const sel = (d.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
        assert.ok(selects(sel, podLabels(d)), `Deployment ${d.metadata.name} selects its own pods`);
      }
      for (const o of [...objectsOf(objects, "Service"), ...objectsOf(objects, "PodDisruptionBudget")]) {
        const spec = o.spec as {
          selector: Record<string, string> & { matchLabels?: Record<string, string> };
        };
        const sel = o.kind === "Service" ? spec.selector : spec.selector.matchLabels!;
        assert.ok(
          templates.some((l) => selects(sel, l)),
          `${o.kind} ${o.metadata.name} selects some pods`,
        );
      }
      const gwLabels = podLabels(gateway.deployment);
      const svc = objectsOf(objects, "Service").find((s) => selects((s.spec as any).selector, gwLabels));
      const http = (svc?.spec as any)?.ports.find((p: any) => p.name === "http");
      assert.equal(portOf(gateway.container, http?.targetPort), config.gateway.listen.port);
    });

    test("the Role grants only get, list and watch on pods and inferencepools, to the pods' ServiceAccount", () => {
      const clusterWide = [...objectsOf(objects, "ClusterRole"), ...objectsOf(objects, "ClusterRoleBinding")];
      assert.deepEqual(clusterWide, [], "no cluster-wide RBAC");
      const grants = new Map<string, string[]>();
      for (const role of objectsOf(objects, "Role")) {
        for (const rule of role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
          for (const g of rule.apiGroups)
            for (const r of rule.resources)
              grants.set(`${g}/${r}`, [...(grants.get(`${g}/${r}`) ?? []), ...rule.verbs]);
        }
      }
      assert.deepEqual(Object.fromEntries([...grants].map(([k, v]) => [k, [...new Set(v)].sort()])), {
        "/pods": ["get", "list", "watch"],
        "inference.networking.k8s.io/inferencepools": ["get", "list", "watch"],
      });
      const roles = new Set(objectsOf(objects, "Role").map((r) => `${nsOf(r)}/${r.metadata.name}`));
      const bound = objectsOf(objects, "RoleBinding")
        .filter(
          (b) => (b.roleRef as any).kind === "Role" && roles.has(`${nsOf(b)}/${(b.roleRef as any).name}`),
        )
        .flatMap((b) =>
          (b.subjects as any[])
            .filter((s) => s.kind === "ServiceAccount")
            .map((s) => `${s.namespace ?? nsOf(b)}/${s.name}`),
        );
      for (const { deployment: d } of [...running(objects, "gateway"), ...running(objects, "epp")]) {
        const sa = podSpec(d).serviceAccountName ?? "default";
        assert.ok(bound.includes(`${nsOf(d)}/${sa}`), `${d.metadata.name}'s ServiceAccount ${sa} is bound`);
        const accounts = objectsOf(objects, "ServiceAccount");
        assert.ok(
          accounts.some((s) => s.metadata.name === sa && nsOf(s) === nsOf(d)),
          `ServiceAccount ${sa}`,
        );
      }
    });

    test("each discovering tokengate pool names an InferencePool of this overlay, in its namespace", () => {
      const discovering = [...config.pools.values()].filter((p) => p.discovery !== null);
      assert.ok(discovering.length > 0, "a pool finds its engines by discovery");
      for (const p of discovering) {
        const { inferencePool, namespace } = p.discovery!.kubernetes;
        const ns = namespace ?? nsOf(gateway.deployment);
        assert.ok(
          pools().some((o) => o.metadata.name === inferencePool && nsOf(o) === ns),
          `pool ${p.name}: InferencePool ${ns}/${inferencePool} is rendered`,
        );
      }
    });

    test("every container runs as non-root on a read-only root, without privilege escalation, with resources", () => {
      for (const d of objectsOf(objects, "Deployment")) {
        const pod = podSpec(d);
        for (const c of pod.containers) {
          const at = `${d.metadata.name}/${c.name}`;
          assert.ok(
            pod.securityContext?.runAsNonRoot ?? c.securityContext?.runAsNonRoot,
            `${at}: runAsNonRoot`,
          );
          assert.equal(c.securityContext?.allowPrivilegeEscalation, false, `${at}: allowPrivilegeEscalation`);
          assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${at}: readOnlyRootFilesystem`);
          assert.ok(
            c.resources?.requests?.cpu && c.resources.limits?.memory,
            `${at}: cpu request, memory limit`,
          );
        }
      }
    });

    test("the picker's Service port is the endpointPickerRef port, served by tokengate epp with gRPC probes", () => {
      const refs = pools().flatMap((p) => {
        const ref = endpointPickerRefOf(p);
        return ref ? [{ pool: p, ref }] : [];
      });
      const epps = running(objects, "epp");
      if (refs.length === 0) {
        assert.equal(epps.length, 0, "no tokengate epp without an endpointPickerRef");
        return;
      }
      for (const { pool, ref } of refs) {
        assert.equal(ref.failureMode, "FailClose");
        const svc = objectsOf(objects, "Service").find(
          (s) => s.metadata.name === ref.name && nsOf(s) === nsOf(pool),
        );
        assert.ok(svc, `endpointPickerRef names Service ${ref.name}, which is rendered`);
        const port = (svc.spec as any).ports.find((p: any) => p.port === ref.port);
        assert.ok(port, `Service ${ref.name} has port ${ref.port}`);
        const epp = epps.find((e) => selects((svc.spec as any).selector, podLabels(e.deployment)));
        assert.ok(epp, `Service ${ref.name} selects the tokengate epp pods`);
        const target = portOf(epp.container, port.targetPort ?? port.port);
        assert.equal(
          Number(flag(epp.container, "--port")),
          target,
          "the picker listens on the Service's targetPort",
        );
        assert.equal(epp.container.readinessProbe?.grpc?.port, target, "gRPC readiness on the picker's port");
        assert.equal(epp.container.livenessProbe?.grpc?.port, target, "gRPC liveness on the picker's port");
        const eppConfig = loadMounted(objects, epp.deployment, epp.container);
        const names = [...eppConfig.pools.values()].map((p) => p.discovery?.kubernetes.inferencePool);
        assert.ok(names.includes(pool.metadata.name), `the picker's config discovers ${pool.metadata.name}`);
      }
    });

    test("Envoy's ext_proc filter and clusters are wired as the reference standalone chart does", () => {
      const refs = pools().flatMap((p) => endpointPickerRefOf(p) ?? []);
      const boots = objectsOf(objects, "ConfigMap").filter(
        (c) => (c.data as any)?.["envoy.yaml"] !== undefined,
      );
      if (refs.length === 0) {
        assert.equal(boots.length, 0, "no Envoy bootstrap without an endpointPickerRef");
        return;
      }
      assert.equal(boots.length, 1, "an Envoy bootstrap ConfigMap");
      const cm = boots[0]!;
      const ref = refs[0]!;
      const boot = parseYaml((cm.data as any)["envoy.yaml"]);
      const hcm = boot.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
      const filters: any[] = hcm.http_filters;
      assert.deepEqual(
        filters.map((f) => f.name),
        ["envoy.filters.http.ext_proc", "envoy.filters.http.router"],
      );
      const extProc = filters[0].typed_config;
      assert.deepEqual(extProc.processing_mode, {
        request_header_mode: "SEND",
        response_header_mode: "SEND",
        request_body_mode: "FULL_DUPLEX_STREAMED",
        response_body_mode: "FULL_DUPLEX_STREAMED",
        request_trailer_mode: "SEND",
        response_trailer_mode: "SEND",
      });
      assert.equal(extProc.failure_mode_allow === true, ref.failureMode === "FailOpen", "failure_mode_allow");
      const clusters = new Map<string, any>(boot.static_resources.clusters.map((c: any) => [c.name, c]));
      const picker = clusters.get(extProc.grpc_service.envoy_grpc.cluster_name);
      const addr = picker.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
      assert.equal(
        addr.address,
        `${ref.name}.${nsOf(cm)}.svc.cluster.local`,
        "the picker cluster is its Service",
      );
      assert.equal(addr.port_value, ref.port);
      assert.equal(
        picker.health_checks[0].grpc_health_check.service_name,
        "envoy.service.ext_proc.v3.ExternalProcessor",
      );
      const upstream = clusters.get(hcm.route_config.virtual_hosts[0].routes[0].route.cluster);
      assert.equal(upstream.type, "ORIGINAL_DST");
      assert.equal(upstream.lb_policy, "CLUSTER_PROVIDED");
      assert.deepEqual(upstream.original_dst_lb_config, {
        use_http_header: true,
        http_header_name: "x-gateway-destination-endpoint",
      });
      const envoy = objectsOf(objects, "Deployment")
        .flatMap((d) => podSpec(d).containers.map((c) => ({ d, c })))
        .find(({ c }) => flag(c, "--config-path") !== undefined);
      assert.ok(envoy, "a Deployment runs Envoy with --config-path");
      const mounted = configMapAt(objects, envoy.d, envoy.c, dirname(flag(envoy.c, "--config-path")!));
      assert.equal(mounted.metadata.name, cm.metadata.name, "Envoy mounts the bootstrap");
    });
  });
}
