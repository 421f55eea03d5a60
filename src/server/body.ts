/** Request bodies, read within a byte limit and never held whole when they can be streamed. */
import { isUtf8 } from "node:buffer";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream, ReadableStreamReadResult } from "node:stream/web";
import { formatByteLimit, parseJsonText, RequestRefusedError } from "../engine/index.js";

/** The body was not read to its end: the connection is closed after the answer, not reused. */
const CLOSE = { connection: "close" };

function tooLarge(limit: number, hint: string): RequestRefusedError {
  return new RequestRefusedError(413, "BODY_TOO_LARGE", `The request body is larger than ${formatByteLimit(limit)}`, {
    hint,
    headers: CLOSE,
  });
}

/** The client went away before sending its whole body (nginx's 499: nobody reads the answer, the log does). */
function incomplete(cause: unknown): RequestRefusedError {
  return new RequestRefusedError(499, "CLIENT_CLOSED", "The client closed the connection before sending the whole body: nothing was added", { cause, headers: CLOSE });
}

/** JSON media types (`application/json`, `application/x-ndjson`, `application/jsonl`, `+json`); a missing type is read as JSON. */
export function checkJsonMediaType(contentType: string | undefined, lines: boolean): void {
  if (contentType === undefined || contentType.trim() === "") return;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  const ok = type === "application/json" || type.endsWith("+json") || (lines && ["application/x-ndjson", "application/jsonl", "application/json-lines", "application/jsonlines"].includes(type));
  if (!ok) {
    const expected = lines ? "application/json (a JSON array or object) or application/x-ndjson (JSON Lines)" : "application/json";
    throw new RequestRefusedError(415, "UNSUPPORTED_MEDIA_TYPE", `The body is ${JSON.stringify(type.slice(0, 100))}; expected ${expected}`, {
      hint: "Set Content-Type (curl: -H 'Content-Type: application/json', or --json).",
    });
  }
}

/** Refuses a body whose declared length is over the limit before reading any of it. */
export function checkDeclaredLength(headers: Headers, limit: number, hint: string): void {
  const declared = headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit, hint);
}

/**
 * Whether the client sent its whole body, from Node's own message (the adapter puts it in the
 * environment); undefined where there is none (a request made in-process, as tests do).
 */
export function bodyCompleteness(env: unknown): (() => boolean) | undefined {
  const incoming = (env as { incoming?: { complete?: unknown } } | undefined)?.incoming;
  return incoming && typeof incoming.complete === "boolean" ? () => incoming.complete === true : undefined;
}

export const OBJECTS_HINT = "Send fewer objects per request, or start the server with a larger --max-body-mb.";

/**
 * The body's chunks: 413 once they pass `limit` bytes, 499 when the client leaves before the end.
 * Nothing is read until a reader asks (a generator runs on demand), so no error can arise before
 * someone is there to be told: a stream destroyed with an error nobody listens to ends the process.
 * `onChunk` sees each chunk's size before it is passed on (and may throw to refuse it); `complete`
 * says whether the whole message arrived, asked when the stream ends.
 */
async function* limitedChunks(body: WebReadableStream<Uint8Array>, limit: number, hint: string, onChunk?: (bytes: number) => void, complete?: () => boolean): AsyncGenerator<Buffer> {
  const reader = body.getReader();
  let seen = 0;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        throw incomplete(error);
      }
      if (next.done) {
        // A dropped upload can end the web stream as if it were whole (Node's IncomingMessage is
        // destroyed without an error when nobody listened for one): only the parser knows.
        if (complete !== undefined && !complete()) throw incomplete(new Error("the body ended before the message did"));
        return;
      }
      seen += next.value.byteLength;
      if (seen > limit) throw tooLarge(limit, hint);
      onChunk?.(next.value.byteLength);
      yield Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    }
  } finally {
    // Stopped early (too large, or the reader gave up): the rest of the body is not read.
    reader.cancel().catch(() => {});
  }
}

/**
 * The body as a Node stream that fails with 413 once it passes `limit` bytes, and with 499 when the
 * client goes away mid-body (Readable.fromWeb read a body whose client had left as an empty one).
 */
export function limitedStream(request: Request, limit: number, hint = OBJECTS_HINT, onChunk?: (bytes: number) => void, complete?: () => boolean): Readable {
  checkDeclaredLength(request.headers, limit, hint);
  if (request.body === null) return Readable.from([]);
  return Readable.from(limitedChunks(request.body as unknown as WebReadableStream<Uint8Array>, limit, hint, onChunk, complete), { objectMode: false });
}

/** The whole body, at most `limit` bytes, parsed as JSON (422 INVALID_JSON naming the line otherwise). */
export async function readJsonBody(request: Request, limit: number, complete?: () => boolean, what = "A create-index body"): Promise<unknown> {
  const hint = `${what} is at most ${formatByteLimit(limit)}.`;
  const chunks: Buffer[] = [];
  for await (const chunk of limitedStream(request, limit, hint, undefined, complete) as AsyncIterable<Buffer>) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  if (!isUtf8(bytes)) throw new RequestRefusedError(422, "INVALID_JSON", "The request body is not valid UTF-8 text");
  const text = bytes.toString("utf8");
  if (text.trim() === "") throw new RequestRefusedError(422, "EMPTY_BODY", "The request body is empty: expected a JSON document");
  return parseJsonText(text, "body");
}
