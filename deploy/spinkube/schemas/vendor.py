#!/usr/bin/env python3
"""Regenerates the vendored schemas in this folder from their published sources (see README.md
here). Not run by the tests: the outputs are committed, so validation needs no network.

  vendor.py KUBERNETES_VALIDATE_WHEEL SPINAPP_CRD_YAML

Kubernetes (CronJob, Secret): the strict JSON schemas for one Kubernetes version as
shipped in PyPI's kubernetes-validate wheel, each made standalone by copying in only the
definitions it reaches (the wheel's shared _definitions.json is 1.5 MB).

SpinApp: the openAPIV3Schema of the spin-operator CRD, made strict the way kubeconform's
openapi2jsonschema does it: an object with declared properties admits no others unless the CRD
says x-kubernetes-preserve-unknown-fields, so a misspelt field fails instead of being pruned.
"""
import json
import sys
import zipfile

K8S = "v1.34.0-local-strict"
KINDS = {"cronjob-batch-v1": "CronJob", "secret-v1": "Secret"}
DEFS = "/api/_definitions.json#/$defs/"


def standalone(top, defs):
    needed, todo = {}, []

    def rewrite(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.split("/$defs/", 1)[1]
                node["$ref"] = "#/$defs/" + name
                if name not in needed:
                    needed[name] = None
                    todo.append(name)
            for value in node.values():
                rewrite(value)
        elif isinstance(node, list):
            for value in node:
                rewrite(value)

    rewrite(top)
    while todo:
        name = todo.pop()
        definition = json.loads(json.dumps(defs[name]))
        rewrite(definition)
        needed[name] = definition
    top["$defs"] = dict(sorted(needed.items()))
    return top


def strict_crd(node):
    if isinstance(node, dict):
        if node.pop("nullable", False) and isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
        if (
            "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for value in node.values():
            strict_crd(value)
    elif isinstance(node, list):
        for value in node:
            strict_crd(value)
    return node


def main(wheel, crd_path):
    base = "kubernetes_validate/kubernetes-json-schema/" + K8S + "/"
    with zipfile.ZipFile(wheel) as z:
        defs = json.loads(z.read(base + "_definitions.json"))["$defs"]
        for stem in KINDS:
            top = json.loads(z.read(base + stem + ".json"))
            with open(f"k8s-{K8S.split('-')[0]}-{stem}.json", "w") as out:
                json.dump(standalone(top, defs), out, indent=1, sort_keys=True)
                out.write("\n")
    from ruamel.yaml import YAML

    with open(crd_path) as f:
        crd = YAML(typ="safe").load(f)
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")
    schema = strict_crd(version["schema"]["openAPIV3Schema"])
    # The API server checks these two against the CRD's group and kind before the schema.
    schema["properties"]["apiVersion"]["enum"] = ["core.spinkube.dev/v1alpha1"]
    schema["properties"]["kind"]["enum"] = ["SpinApp"]
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "spec"})
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    with open("spinapp-core.spinkube.dev-v1alpha1.json", "w") as out:
        json.dump(schema, out, indent=1, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
