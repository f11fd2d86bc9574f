// The wasi:http@0.2.0 response of the one-line form and its test job.

import { Fields, OutgoingBody, OutgoingResponse, ResponseOutparam } from 'wasi:http/types@0.2.0';

export function respond(responseOut, status, contentType, text, extra = []) {
  const enc = (v) => new TextEncoder().encode(v);
  const bytes = enc(text);
  const headers = Fields.fromList([['content-type', enc(contentType)], ['content-length', enc(String(bytes.length))], ...extra]);
  const response = new OutgoingResponse(headers);
  response.setStatusCode(status);
  const body = response.body();
  ResponseOutparam.set(responseOut, { tag: 'ok', val: response });
  const stream = body.write();
  // blocking-write-and-flush takes at most 4096 bytes per call.
  for (let at = 0; at < bytes.length; at += 4096) stream.blockingWriteAndFlush(bytes.subarray(at, at + 4096));
  // The stream must be dropped before its body can be finished.
  stream[Symbol.dispose]();
  OutgoingBody.finish(body, undefined);
}
