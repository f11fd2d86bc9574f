"""The wasi:http@0.2.0 plumbing of the handler: the bearer check, the request body, the response."""

import hmac
import json
from urllib.parse import parse_qs

from componentize_py_types import Err, Ok
from wit_world.imports.streams import StreamError_Closed
from wit_world.imports.types import Fields, OutgoingBody, OutgoingResponse, ResponseOutparam

# The operator's parameters fit in far less; a larger body is refused, not read.
MAX_BODY_BYTES = 4096


def bearer_matches(request, token):
    with request.headers() as headers:
        values = headers.get("authorization")
    scheme, _, presented = (values[0] if len(values) == 1 else b"").partition(b" ")
    # compare_digest takes time independent of where the bytes differ.
    return scheme.lower() == b"bearer" and hmac.compare_digest(presented.strip(), token.encode())


def read_body(request):
    data = b""
    with request.consume() as body:
        with body.stream() as stream:
            while len(data) <= MAX_BODY_BYTES:
                try:
                    data += stream.blocking_read(MAX_BODY_BYTES + 1 - len(data))
                except Err as ended:
                    if isinstance(ended.value, StreamError_Closed):
                        break
                    raise ValueError("the body could not be read") from None
    if len(data) > MAX_BODY_BYTES:
        raise ValueError(f"the body is over {MAX_BODY_BYTES} bytes")
    return data.decode()


def parameters(request, query):
    """`by`, `reason`, `drain_ms` from the query, then from a JSON or form body."""
    found = {k: v[-1] for k, v in parse_qs(query).items()}
    body = read_body(request).strip()
    if body.startswith("{"):
        parsed = json.loads(body)
        found.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in parsed.items()})
    elif body:
        found.update({k: v[-1] for k, v in parse_qs(body).items()})
    return found


def respond(response_out, status, content_type, text, extra=()):
    body_bytes = text.encode()
    length = str(len(body_bytes)).encode()
    headers = [("content-type", content_type.encode()), ("content-length", length), *extra]
    headers = Fields.from_list(headers)
    response = OutgoingResponse(headers)
    response.set_status_code(status)
    body = response.body()
    ResponseOutparam.set(response_out, Ok(response))
    # The stream must be dropped (leaving `with`) before the body can be finished;
    # blocking-write-and-flush takes at most 4096 bytes per call.
    with body.write() as stream:
        for start in range(0, len(body_bytes), 4096):
            stream.blocking_write_and_flush(body_bytes[start : start + 4096])
    OutgoingBody.finish(body, None)
