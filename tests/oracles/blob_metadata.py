"""The lock blobs of a container as the Azure SDK for Python reads them: a JSON question per line
on stdin ({"connection_string", "container"}), a JSON answer per line on stdout, each written
before the next question is read: every blob's lease state and metadata, by name. The tests
judge the board and /metrics by it."""

import json
import sys

from azure.storage.blob import BlobServiceClient

for line in iter(sys.stdin.readline, ""):
    question = json.loads(line)
    # The storage version the component sends (src/lib.rs STORAGE_VERSION); the pinned Azurite
    # does not serve the SDK's newer default.
    service = BlobServiceClient.from_connection_string(
        question["connection_string"], api_version="2025-11-05"
    )
    container = service.get_container_client(question["container"])
    blobs = {}
    for blob in container.list_blobs(include=["metadata"]):
        blobs[blob.name] = {"state": blob.lease.state, "metadata": blob.metadata or {}}
    print(json.dumps(blobs), flush=True)
