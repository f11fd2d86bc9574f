// The wasi:http@0.2.0 plumbing of the handler: the bearer check, the request body, the response.

import { Fields, OutgoingBody, OutgoingResponse, ResponseOutparam } from 'wasi:http/types@0.2.0';

// The operator's parameters fit in far less; a larger body is refused, not read.
const MAX_BODY_BYTES = 4096;

// StarlingMonkey has no timingSafeEqual: every byte of the expected token is looked at, with
// no early exit, so the time does not depend on where a guess goes wrong (the JIT gives no
// hard guarantee, as with any JavaScript comparison).
export function sameToken(presented, expected) {
  const [given, wanted] = [new TextEncoder().encode(presented), new TextEncoder().encode(expected)];
  let difference = given.length ^ wanted.length;
  for (let i = 0; i < wanted.length; i++) difference |= (given.length ? given[i % given.length] : 0) ^ wanted[i];
  return difference === 0;
}

export function bearerMatches(request, token) {
  const headers = request.headers();
  const values = headers.get('authorization');
  headers[Symbol.dispose]();
  const [scheme, ...rest] = (values.length === 1 ? new TextDecoder().decode(values[0]) : '').split(' ');
  return scheme.toLowerCase() === 'bearer' && sameToken(rest.join(' ').trim(), token);
}

export function readBody(request) {
  const body = request.consume();
  const stream = body.stream();
  const chunks = [];
  let size = 0;
  try {
    while (size <= MAX_BODY_BYTES) {
      const chunk = stream.blockingRead(BigInt(MAX_BODY_BYTES + 1 - size));
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (ended) {
    if (ended?.payload?.tag !== 'closed') throw new Error('the body could not be read');
  } finally {
    // The stream must be dropped before its body.
    stream[Symbol.dispose]();
    body[Symbol.dispose]();
  }
  if (size > MAX_BODY_BYTES) throw new Error(`the body is over ${MAX_BODY_BYTES} bytes`);
  const bytes = new Uint8Array(size);
  chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

// `by`, `reason`, `drain_ms` from the query, then from a JSON or form body.
export function parameters(request, query) {
  const found = Object.fromEntries(new URLSearchParams(query));
  const body = readBody(request).trim();
  if (body.startsWith('{')) {
    for (const [key, value] of Object.entries(JSON.parse(body))) found[key] = typeof value === 'string' ? value : JSON.stringify(value);
  } else if (body) {
    Object.assign(found, Object.fromEntries(new URLSearchParams(body)));
  }
  return found;
}

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
