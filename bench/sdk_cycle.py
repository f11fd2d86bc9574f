"""Acquire+release cycles with the Azure SDK for Python: the benchmark's reference.

Usage: python sdk_cycle.py <connection-string> <container> <cycles>
Prints one JSON object: {"latencies_ms": [...]} (one entry per acquire+release cycle).
"""
import json
import sys
import time

from azure.storage.blob import BlobServiceClient

# Azurite 3.35 accepts x-ms-version up to 2025-11-05; the SDK's default is newer.
API_VERSION = "2025-11-05"


def main() -> None:
    connection_string, container, cycles = sys.argv[1], sys.argv[2], int(sys.argv[3])
    service = BlobServiceClient.from_connection_string(connection_string, api_version=API_VERSION)
    container_client = service.get_container_client(container)
    if not container_client.exists():
        container_client.create_container()
    blob = container_client.get_blob_client("sdk-lock")
    if not blob.exists():
        blob.upload_blob(b"")
    latencies = []
    for _ in range(cycles):
        started = time.perf_counter()
        lease = blob.acquire_lease(lease_duration=15)
        lease.release()
        latencies.append((time.perf_counter() - started) * 1000.0)
    print(json.dumps({"latencies_ms": latencies}))


if __name__ == "__main__":
    main()
