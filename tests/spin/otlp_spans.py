"""Decodes OTLP/HTTP trace exports (ExportTraceServiceRequest, protobuf) with the
opentelemetry-proto package and prints one JSON object per span: its trace, id, parent, name,
kind and string/int attributes. Usage: otlp_spans.py FILE..."""
import gzip
import json
import sys

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind in ("string_value", "int_value", "bool_value", "double_value") else None


for path in sys.argv[1:]:
    request = ExportTraceServiceRequest()
    with open(path, "rb") as f:
        body = f.read()
    request.ParseFromString(gzip.decompress(body) if path.endswith(".gz") else body)
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                print(json.dumps({
                    "trace": span.trace_id.hex(),
                    "span": span.span_id.hex(),
                    "parent": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": span.kind,
                    "attributes": {a.key: value(a.value) for a in span.attributes},
                }))
