"""The wasi:http@0.2.0 response of the one-line form and its test job."""

from componentize_py_types import Ok
from wit_world.imports.types import Fields, OutgoingBody, OutgoingResponse, ResponseOutparam


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
