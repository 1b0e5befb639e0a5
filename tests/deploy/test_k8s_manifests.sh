#!/usr/bin/env bash
# deploy/k8s (kustomize base), deploy/k8s-redis (the base + Redis) and
# deploy/k8s-gpu (the base as GPU pods):
#   - kubectl kustomize renders both, offline
#   - every object passes tests/deploy/k8s_check.mjs: fields known to the
#     API (unknown ones rejected), types, required fields
#   - the checker is not vacuous: a typo'd field, a wrong type, a missing
#     required field and an unknown kind are each rejected
#   - what the issue asks of the objects: probes, preStop, resources,
#     security context, init container fetch, HPA, PDB, Service, ConfigMap
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/deploy/deploy_lib.sh"
need kubectl node
[ -d "$FANYI_SOURCE_DIR/node_modules/@kubernetes/client-node" ] &&
    [ -d "$FANYI_SOURCE_DIR/node_modules/kubernetes-models" ] || {
    echo "SKIP: node_modules lacks the schema packages (scripts/setup.sh runs npm ci)"
    exit 77
}
CHECK="node $FANYI_SOURCE_DIR/tests/deploy/k8s_check.mjs"

for k in k8s k8s-gpu k8s-redis; do
    t0=$(date +%s%N)
    run kubectl kustomize "$DEPLOY_SRC/$k"
    expect_status 0
    cp "$FY_TMP/out" "$FY_TMP/$k.yaml"
    note "kubectl kustomize deploy/$k: $((($(date +%s%N) - t0) / 1000000)) ms"
    run $CHECK "$FY_TMP/$k.yaml" --json "$FY_TMP/$k.json"
    expect_status 0
    cat "$FY_TMP/out"
    [ -s "$FY_TMP/err" ] && cat "$FY_TMP/err" >&2
done
expect_out '^ok Deployment/fanyi-redis$'

# The checker rejects what it should (each a JSON document: YAML too).
mutate() { # mutate NAME PYTHON-STATEMENT (d: the Deployment)
    python3 - "$FY_TMP/k8s.json" "$FY_TMP/bad-$1.yaml" "$2" <<'PY'
import json, sys
docs = json.load(open(sys.argv[1]))
d = next(o for o in docs if o["kind"] == "Deployment")
c = d["spec"]["template"]["spec"]["containers"][0]
exec(sys.argv[3])
open(sys.argv[2], "w").write("\n---\n".join(json.dumps(o) for o in docs))
PY
    run $CHECK "$FY_TMP/bad-$1.yaml"
    expect_status 1
}
mutate typo 'c["readinessProbe"]["periodSecondz"] = c["readinessProbe"].pop("periodSeconds")'
expect_err 'readinessProbe.periodSecondz: unknown field'
mutate type 'd["spec"]["replicas"] = "2"'
expect_err 'spec.replicas: expected a number'
mutate required 'del c["name"]'
expect_err "containers/0 must have required property '?name'?"
mutate kind 'd["kind"] = "Deploymant"'
expect_err 'unknown apiVersion/kind apps/v1 Deploymant'
mutate nested 'c["securityContext"]["capabilities"]["dorp"] = ["ALL"]'
expect_err 'capabilities.dorp: unknown field'

# What the objects must say.
cat >"$FY_TMP/assert.py" <<'PY'
import json, sys
docs = json.load(open(sys.argv[1]))
by = {o["kind"]: o for o in docs}
assert sorted(by) == ["ConfigMap", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                      "Service"], sorted(by)
d, svc, hpa, pdb, cm = (by[k] for k in ("Deployment", "Service", "HorizontalPodAutoscaler",
                                          "PodDisruptionBudget", "ConfigMap"))
pod = d["spec"]["template"]["spec"]
labels = d["spec"]["template"]["metadata"]["labels"]
sel = d["spec"]["selector"]["matchLabels"]
assert all(labels.get(k) == v for k, v in sel.items()), "selector does not match the pod"
assert d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
assert pod["enableServiceLinks"] is False, "service links would set FANYI_PORT=tcp://..."
assert pod["automountServiceAccountToken"] is False
psc = pod["securityContext"]
assert psc["runAsNonRoot"] is True and psc["runAsUser"] == 10001 and psc["seccompProfile"]["type"] == "RuntimeDefault"
(c,) = pod["containers"]
(init,) = pod["initContainers"]
for x in (c, init):
    sc = x["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False, x["name"]
    assert sc["capabilities"]["drop"] == ["ALL"], x["name"]
    assert x["image"] == "fanyi:latest", x["image"]
    assert [e["configMapRef"]["name"] for e in x["envFrom"]] == [cm["metadata"]["name"]], "ConfigMap name"
assert init["args"] == ["fetch"], init.get("args")
assert c["command"] == ["fanyi"] and c["args"] == ["serve"], "the server must not run the fetching entrypoint"
env = {e["name"]: e for e in c["env"]}
assert env["FANYI_HOST"]["value"] == "0.0.0.0" and env["FANYI_PORT"]["value"] == "8989"
assert env["FANYI_THREADS"]["valueFrom"]["resourceFieldRef"]["resource"] == "limits.cpu"
port = c["ports"][0]["containerPort"]
assert c["readinessProbe"]["httpGet"] == {"path": "/ready", "port": port}
assert c["livenessProbe"]["httpGet"] == {"path": "/health", "port": port}
assert c["startupProbe"]["httpGet"]["path"] == "/health"
assert c["startupProbe"]["periodSeconds"] * c["startupProbe"]["failureThreshold"] >= 30
wait = int(c["lifecycle"]["preStop"]["exec"]["command"][1])
assert c["lifecycle"]["preStop"]["exec"]["command"][0] == "sleep" and wait >= 3
assert pod["terminationGracePeriodSeconds"] >= wait + 10 + 5, "preStop + 10 s drain + margin"
for k in ("cpu", "memory"):
    assert k in c["resources"]["requests"] and k in c["resources"]["limits"], k
mounts = {m["name"]: m for m in c["volumeMounts"]}
imounts = {m["name"]: m for m in init["volumeMounts"]}
assert mounts["models"]["readOnly"] is True and not imounts["models"].get("readOnly")
assert mounts["models"]["mountPath"] == imounts["models"]["mountPath"] == "/models"
vols = {v["name"]: v for v in pod["volumes"]}
assert "emptyDir" in vols["models"]
assert cm["data"]["FANYI_FETCH"].split() == ["zh-en", "en-zh"]
assert svc["spec"]["selector"] == sel
assert svc["spec"]["ports"][0]["targetPort"] in ("http", port)
assert c["ports"][0]["name"] == svc["spec"]["ports"][0]["targetPort"]
t = hpa["spec"]["scaleTargetRef"]
assert (t["kind"], t["name"]) == ("Deployment", d["metadata"]["name"])
assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
assert hpa["spec"]["minReplicas"] >= 2
assert pdb["spec"]["selector"]["matchLabels"] == sel and pdb["spec"]["maxUnavailable"] == 1
# The Redis overlay: the pods are told the Redis Service's name and port.
rd = json.load(open(sys.argv[2]))
rcm = next(o for o in rd if o["kind"] == "ConfigMap")
rsvc = next(o for o in rd if o["kind"] == "Service" and o["metadata"]["name"] == "fanyi-redis")
url = rcm["data"]["FANYI_REDIS"]
assert url == f"redis://{rsvc['metadata']['name']}:{rsvc['spec']['ports'][0]['port']}/0", url
rdep = next(o for o in rd if o["kind"] == "Deployment" and o["metadata"]["name"] == "fanyi")
assert rdep["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"] == rcm["metadata"]["name"]
rr = next(o for o in rd if o["kind"] == "Deployment" and o["metadata"]["name"] == "fanyi-redis")
rc = rr["spec"]["template"]["spec"]["containers"][0]
assert rc["securityContext"]["readOnlyRootFilesystem"] is True
assert "--maxmemory" in rc["args"]
# The GPU overlay: one GPU per pod, the Vulkan device, the toolkit's
# graphics capability (the Vulkan ICD), pods and Service of their own.
gd = json.load(open(sys.argv[3]))
gby = {o["kind"]: o for o in gd}
assert "HorizontalPodAutoscaler" not in gby, "GPU pods are scaled by hand"
gdep, gsvc = gby["Deployment"], gby["Service"]
assert gdep["metadata"]["name"] == "fanyi-gpu" and gsvc["metadata"]["name"] == "fanyi-gpu"
gsel = gdep["spec"]["selector"]["matchLabels"]
assert gsel != sel and gsvc["spec"]["selector"] == gsel, "the CPU Service must not reach GPU pods"
gpod = gdep["spec"]["template"]["spec"]
(gc,) = gpod["containers"]
assert gc["resources"]["limits"]["nvidia.com/gpu"] == "1"
genv = {e["name"]: e.get("value") for e in gc["env"]}
assert genv["FANYI_DEVICE"] == "vulkan"
assert "graphics" in genv["NVIDIA_DRIVER_CAPABILITIES"].split(","), "Vulkan needs graphics"
assert any(t["key"] == "nvidia.com/gpu" for t in gpod["tolerations"])
assert gc["securityContext"]["readOnlyRootFilesystem"] is True
print("objects as required")
PY
run python3 "$FY_TMP/assert.py" "$FY_TMP/k8s.json" "$FY_TMP/k8s-redis.json" "$FY_TMP/k8s-gpu.json"
expect_status 0
expect_out '^objects as required$'
finish
