// k8s_check.mjs - strict offline schema check of Kubernetes manifests.
//
//   node k8s_check.mjs FILE.yaml [--json OUT.json]
//
// Every object of the multi-document YAML is checked twice:
//  - against the model classes of @kubernetes/client-node (generated from
//    the API's OpenAPI spec): every field must be one the API knows (a typo
//    such as periodSecondz is an error, where the API server would drop it
//    or reject it), with the right type (string, integer, boolean, list,
//    map, object, int-or-string);
//  - with kubernetes-models' JSON-schema validation: required fields,
//    enumerations and formats.
// Prints "ok KIND/NAME" per object, or the errors; exits 1 on any error.
// --json writes the objects as a JSON list (for the test's own assertions).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const root = process.env.FANYI_SOURCE_DIR || path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const require = createRequire(path.join(root, "package.json"));
const yaml = require("js-yaml");
const models = await import(
    pathToFileURL(path.join(root, "node_modules/@kubernetes/client-node/dist/gen/models/all.js")).href);

const [file, ...rest] = process.argv.slice(2);
if (!file) {
    console.error("usage: node k8s_check.mjs FILE.yaml [--json OUT.json]");
    process.exit(2);
}
const docs = yaml.loadAll(fs.readFileSync(file, "utf8")).filter((d) => d != null);
const errors = [];

// V1Deployment for apps/v1 Deployment, V2HorizontalPodAutoscaler for autoscaling/v2.
function className(obj) {
    const version = String(obj.apiVersion || "").split("/").pop();
    return "V" + version.slice(1) + obj.kind;
}

function isPlainObject(v) {
    return v !== null && typeof v === "object" && !Array.isArray(v);
}

function walk(value, type, where) {
    const arr = /^Array<(.+)>$/.exec(type);
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
    if (arr) {
        if (!Array.isArray(value)) return errors.push(`${where}: expected a list, got ${JSON.stringify(value)}`);
        value.forEach((v, i) => walk(v, arr[1], `${where}[${i}]`));
    } else if (map) {
        if (!isPlainObject(value)) return errors.push(`${where}: expected a map`);
        for (const [k, v] of Object.entries(value)) walk(v, map[1], `${where}.${k}`);
    } else if (type === "string" || type === "Date") {
        if (typeof value !== "string") errors.push(`${where}: expected a string, got ${JSON.stringify(value)}`);
    } else if (type === "number") {
        if (typeof value !== "number") errors.push(`${where}: expected a number, got ${JSON.stringify(value)}`);
    } else if (type === "boolean") {
        if (typeof value !== "boolean") errors.push(`${where}: expected true or false, got ${JSON.stringify(value)}`);
    } else if (type === "IntOrString") {
        if (typeof value !== "string" && !Number.isInteger(value))
            errors.push(`${where}: expected an integer or a string, got ${JSON.stringify(value)}`);
    } else if (type === "any" || type === "object") {
        // free-form (e.g. an extension's raw object)
    } else {
        const cls = models[type];
        if (!cls || !cls.attributeTypeMap) return errors.push(`${where}: no model for type ${type}`);
        if (!isPlainObject(value)) return errors.push(`${where}: expected an object (${type})`);
        const fields = new Map(cls.attributeTypeMap.map((a) => [a.baseName, a]));
        for (const [k, v] of Object.entries(value)) {
            const f = fields.get(k);
            if (!f) errors.push(`${where}.${k}: unknown field (not in ${type})`);
            else if (v !== null) walk(v, f.type, `${where}.${k}`);
        }
    }
}

// kubernetes-models: kubernetes-models/apps/v1 for apps/v1, .../v1 for v1.
async function validate(obj, where) {
    let mod;
    try {
        mod = require(`kubernetes-models/${obj.apiVersion}`);
    } catch {
        return errors.push(`${where}: kubernetes-models has no ${obj.apiVersion}`);
    }
    const Cls = mod[obj.kind];
    if (!Cls) return errors.push(`${where}: kubernetes-models has no ${obj.apiVersion} ${obj.kind}`);
    try {
        new Cls(obj).validate();
    } catch (e) {
        const details = (e.errors || []).map((x) => `${x.instancePath || "/"} ${x.message}`).join("; ");
        errors.push(`${where}: ${details || e.message}`);
    }
}

for (const obj of docs) {
    const where = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
    const before = errors.length;
    const type = className(obj);
    if (!models[type]) errors.push(`${where}: unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`);
    else walk(obj, type, where);
    await validate(obj, where);
    if (errors.length === before) console.log(`ok ${where}`);
}
const jsonAt = rest.indexOf("--json");
if (jsonAt >= 0) fs.writeFileSync(rest[jsonAt + 1], JSON.stringify(docs, null, 1));
for (const e of errors) console.error(`error: ${e}`);
process.exit(errors.length ? 1 : 0);
