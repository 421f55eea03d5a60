/** Request bodies, read within a byte limit and never held whole when they can be streamed. */
import { isUtf8 } from "node:buffer";
import { Readable, Transform } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
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
function checkDeclaredLength(headers: Headers, limit: number, hint: string): void {
  const declared = headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit, hint);
}

const OBJECTS_HINT = "Send fewer objects per request, or start the server with a larger --max-body-mb.";

/** The body as a Node stream that fails with 413 once it passes `limit` bytes. */
export function limitedStream(request: Request, limit: number, hint = OBJECTS_HINT): NodeJS.ReadableStream {
  checkDeclaredLength(request.headers, limit, hint);
  if (request.body === null) return Readable.from([]);
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      callback(seen > limit ? tooLarge(limit, hint) : null, chunk);
    },
  });
  const source = Readable.fromWeb(request.body as unknown as WebReadableStream<Uint8Array>);
  source.on("error", (error) => counter.destroy(incomplete(error)));
  return source.pipe(counter);
}

/** The whole body, at most `limit` bytes, parsed as JSON (422 INVALID_JSON naming the line otherwise). */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const hint = `A create-index body is at most ${formatByteLimit(limit)}.`;
  const chunks: Buffer[] = [];
  for await (const chunk of limitedStream(request, limit, hint) as AsyncIterable<Buffer>) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  if (!isUtf8(bytes)) throw new RequestRefusedError(422, "INVALID_JSON", "The request body is not valid UTF-8 text");
  const text = bytes.toString("utf8");
  if (text.trim() === "") throw new RequestRefusedError(422, "EMPTY_BODY", "The request body is empty: expected a JSON document");
  return parseJsonText(text, "body");
}
