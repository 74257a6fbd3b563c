// Renders GridLedger's kustomize overlays (deploy/kubernetes) and validates every object against
// the Kubernetes OpenAPI schemas of the kubernetes-models package, then checks what the schemas
// cannot: one validator pod per replica with its volume, probes on /livez and /readyz, resource
// requests, scrape annotations, and a PodDisruptionBudget of f = (n - 1) / 3.
//
//   node check-kubernetes.mjs OVERLAY_DIR...          every object valid, the invariants hold
//   node check-kubernetes.mjs --expect-invalid FILE... every object of each FILE is refused, and
//                                                      each overlay DIR given fails a check
//
// The schemas of kubernetes-models allow fields they do not name, as the API server does unless
// asked for strict validation; the field lists of @kubernetes/client-node's models refuse them
// here, so that a misspelt field is not ignored silently.
//
// The renderer reads the kustomization fields deploy/kubernetes uses (resources, replicas,
// JSON 6902 patches with a target, namespace) and fails on any other, so that a manifest it
// cannot render is never passed as valid.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import YAML from "yaml";
import * as client from "@kubernetes/client-node";

const require = createRequire(import.meta.url);
const kKnownFields = new Set(["apiVersion", "kind", "resources", "replicas", "patches", "namespace"]);

/** The YAML documents of `file`, read as YAML 1.1 as Kubernetes reads them (0400 is octal). */
function loadDocuments(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, "utf8"), { version: "1.1" }).map((doc) => {
    if (doc.errors.length > 0) {
      throw new Error(`${file}: ${doc.errors[0].message}`);
    }
    return doc.toJS();
  }).filter((object) => object !== null);
}

function pointerParts(pointer) {
  return pointer.split("/").slice(1).map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function applyOperation(object, op, where) {
  const parts = pointerParts(op.path);
  const last = parts.pop();
  let parent = object;
  for (const part of parts) {
    if (parent === undefined || parent === null || !(part in parent)) {
      throw new Error(`${where}: patch path ${op.path} does not exist`);
    }
    parent = parent[part];
  }
  if (op.op === "replace" || op.op === "add") {
    if (op.op === "replace" && !(last in parent)) {
      throw new Error(`${where}: patch path ${op.path} does not exist`);
    }
    if (Array.isArray(parent) && op.op === "add") {
      parent.splice(last === "-" ? parent.length : Number(last), 0, op.value);
    } else {
      parent[last] = op.value;
    }
  } else if (op.op === "remove") {
    delete parent[last];
  } else {
    throw new Error(`${where}: patch op ${op.op} is not supported by this renderer`);
  }
}

function matches(object, target) {
  return Object.entries(target).every(([key, value]) =>
    key === "name" ? object.metadata?.name === value : object[key] === value);
}

/** The objects of the kustomization in `dir`, as kustomize build renders them. */
export function render(dir) {
  const file = path.join(dir, "kustomization.yaml");
  const [kustomization] = loadDocuments(file);
  for (const field of Object.keys(kustomization)) {
    if (!kKnownFields.has(field)) {
      throw new Error(`${file}: field ${field} is not supported by this renderer`);
    }
  }
  const objects = [];
  for (const resource of kustomization.resources ?? []) {
    const target = path.join(dir, resource);
    if (fs.statSync(target).isDirectory()) {
      objects.push(...render(target));
    } else {
      objects.push(...loadDocuments(target));
    }
  }
  for (const { name, count } of kustomization.replicas ?? []) {
    const found = objects.filter((o) => o.metadata?.name === name && o.spec?.replicas !== undefined);
    if (found.length === 0) {
      throw new Error(`${file}: replicas names ${name}, which no resource is`);
    }
    found.forEach((o) => { o.spec.replicas = count; });
  }
  for (const patch of kustomization.patches ?? []) {
    const found = objects.filter((o) => matches(o, patch.target ?? {}));
    if (found.length === 0) {
      throw new Error(`${file}: a patch targets ${JSON.stringify(patch.target)}, which no resource is`);
    }
    for (const object of found) {
      for (const op of YAML.parse(patch.patch, { version: "1.1" })) {
        applyOperation(object, op, file);
      }
    }
  }
  if (kustomization.namespace) {
    objects.forEach((o) => { o.metadata.namespace = kustomization.namespace; });
  }
  return objects;
}

/** The kubernetes-models class of an object's apiVersion and kind. */
function modelOf(object) {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !/^[A-Za-z]+$/.test(kind)) {
    throw new Error("apiVersion and kind must be strings");
  }
  const module = require(`kubernetes-models/${apiVersion}/${kind}`);
  return module[kind];
}

/** The fields of `value`, of the client model `type`, that the API does not define. */
function unknownFields(value, type, where) {
  if (value === null || typeof value !== "object") {
    return [];
  }
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    return Array.isArray(value)
      ? value.flatMap((item, i) => unknownFields(item, array[1], `${where}/${i}`)) : [];
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    return Object.entries(value).flatMap(([key, item]) =>
      unknownFields(item, map[1], `${where}/${key}`));
  }
  const Model = client[type];
  if (typeof Model?.getAttributeTypeMap !== "function") {
    return [];  // a primitive, or a free-form value (IntOrString, Quantity, raw JSON)
  }
  const attributes = new Map(Model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([key, item]) => attributes.has(key)
    ? unknownFields(item, attributes.get(key), `${where}/${key}`)
    : [`${where}/${key}: unknown field`]);
}

/** The schema's refusal of `object`, or null when it is valid. */
function schemaError(object) {
  try {
    const Model = modelOf(object);
    new Model(object).validate();
  } catch (error) {
    return error.message.split("\n").slice(0, 6).join("\n  ");
  }
  const version = object.apiVersion.split("/").pop();
  const type = version.charAt(0).toUpperCase() + version.slice(1) + object.kind;
  const unknown = unknownFields(object, type, "data");
  if (client[type] === undefined) {
    return `no field list for ${object.apiVersion} ${object.kind}`;
  }
  return unknown.length === 0 ? null : unknown.join(", ");
}

function name(object) {
  return `${object.kind}/${object.metadata?.name}`;
}

/** The invariants of deploy/kubernetes that no schema states. */
function invariantErrors(objects) {
  const errors = [];
  const byKind = (kind) => objects.filter((o) => o.kind === kind);
  const [sts, ...moreSts] = byKind("StatefulSet");
  if (!sts || moreSts.length > 0) {
    return ["exactly one StatefulSet of validators expected"];
  }
  const n = sts.spec.replicas;
  const f = Math.floor((n - 1) / 3);
  const pdbs = byKind("PodDisruptionBudget");
  if (pdbs.length !== 1 || pdbs[0].spec.maxUnavailable !== f) {
    errors.push(`the PodDisruptionBudget must allow f = ${f} of ${n} validators down, ` +
                `not ${pdbs[0]?.spec.maxUnavailable}`);
  }
  if ((sts.spec.volumeClaimTemplates ?? []).length !== 1) {
    errors.push("each validator pod needs its own PersistentVolumeClaim");
  }
  const pod = sts.spec.template;
  const annotations = pod.metadata.annotations ?? {};
  if (annotations["prometheus.io/scrape"] !== "true" || !annotations["prometheus.io/port"]) {
    errors.push("the pods need prometheus.io/scrape and prometheus.io/port annotations");
  }
  for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    if (!container.resources?.requests?.cpu || !container.resources?.requests?.memory) {
      errors.push(`container ${container.name} has no cpu and memory requests`);
    }
  }
  const node = pod.spec.containers.find((c) => c.name === "gridledger");
  if (node?.livenessProbe?.httpGet?.path !== "/livez") {
    errors.push("the node's liveness probe must ask /livez");
  }
  if (node?.readinessProbe?.httpGet?.path !== "/readyz") {
    errors.push("the node's readiness probe must ask /readyz");
  }
  const services = byKind("Service");
  if (!services.some((s) => s.spec.clusterIP === "None" && s.metadata.name === sts.spec.serviceName)) {
    errors.push("the StatefulSet's serviceName must be a headless Service (P2P)");
  }
  if (!services.some((s) => s.spec.ports.some((p) => p.port === 8545))) {
    errors.push("a Service must expose the JSON-RPC on 8545");
  }
  if (byKind("NetworkPolicy").length === 0) {
    errors.push("a NetworkPolicy must restrict the validators' traffic");
  }
  const config = byKind("ConfigMap").find((c) => c.metadata.name === "gridledger-config");
  const keys = byKind("Secret").find((s) => s.metadata.name === "gridledger-keys");
  for (let i = 0; i < n; i++) {
    if (!config?.data?.[`node${i}.conf`] || !config?.data?.["genesis.json"]) {
      errors.push(`the ConfigMap gridledger-config lacks genesis.json or node${i}.conf`);
    }
    if (!keys?.data?.[`node${i}-validator.key`] || !keys?.data?.[`node${i}-node.key`]) {
      errors.push(`the Secret gridledger-keys lacks node${i}'s keys`);
    }
  }
  const encrypted = Object.values(config?.data ?? {})
    .some((text) => /^passphrase_env = GRIDLEDGER_KEY_PASSPHRASE$/m.test(text));
  const passphrase = byKind("Secret").find((s) => s.metadata.name === "gridledger-passphrase");
  if (encrypted && !passphrase?.data?.passphrase) {
    errors.push("the keys are encrypted but no Secret gridledger-passphrase holds the passphrase");
  }
  const env = node?.env?.find((e) => e.name === "GRIDLEDGER_KEY_PASSPHRASE");
  if (encrypted && env?.valueFrom?.secretKeyRef?.name !== "gridledger-passphrase") {
    errors.push("the node's GRIDLEDGER_KEY_PASSPHRASE must come from the passphrase Secret");
  }
  return errors;
}

function main(args) {
  const expectInvalid = args[0] === "--expect-invalid";
  const inputs = expectInvalid ? args.slice(1) : args;
  if (inputs.length === 0) {
    console.error("usage: check-kubernetes.mjs [--expect-invalid] PATH...");
    return 2;
  }
  let failed = 0;
  for (const input of inputs) {
    if (expectInvalid && fs.statSync(input).isDirectory()) {
      const objects = render(input);
      const errors = [...objects.map(schemaError).filter((e) => e !== null),
                      ...invariantErrors(objects)];
      errors.forEach((error) => console.log(`     ${input}: ${error}`));
      console.log(`${errors.length > 0 ? "ok  " : "FAIL"} ${input}: ` +
                  (errors.length > 0 ? "refused" : "accepted but invalid"));
      failed += errors.length > 0 ? 0 : 1;
      continue;
    }
    if (expectInvalid) {
      for (const object of loadDocuments(input)) {
        const error = schemaError(object);
        if (error === null) {
          console.log(`FAIL ${input}: ${name(object)} was accepted but is invalid`);
          failed++;
        } else {
          console.log(`ok   ${input}: ${name(object)} refused: ${error}`);
        }
      }
      continue;
    }
    const objects = render(input);
    for (const object of objects) {
      const error = schemaError(object);
      console.log(`${error === null ? "ok  " : "FAIL"} ${input}: ${name(object)}` +
                  (error === null ? "" : `\n  ${error}`));
      failed += error === null ? 0 : 1;
    }
    for (const error of invariantErrors(objects)) {
      console.log(`FAIL ${input}: ${error}`);
      failed++;
    }
  }
  console.log(failed === 0 ? "all objects valid" : `${failed} failures`);
  return failed === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
