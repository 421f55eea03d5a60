/**
 * One try at downloading an image over HTTP(S) with `node:http`/`node:https`: redirects followed
 * (at most `maxRedirects`, relative `Location`s resolved, loops and https→http downgrades refused),
 * a connect deadline and a total deadline for the whole try (so a server dripping a byte a second
 * is given up on), and the size limit enforced as the body streams in. Retries and the cache are
 * the caller's (fetch.ts).
 */
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";
import { formatBytes } from "./byte-limit.js";

export { formatBytes };
import type { LookupFunction } from "node:net";

export interface HttpLimits {
  maxBytes: number;
  connectTimeoutMs: number;
  timeoutMs: number;
  maxRedirects: number;
}

export interface HttpContext {
  limits: HttpLimits;
  headers: Record<string, string>;
  agents: { http: http.Agent; https: https.Agent };
  lookup?: LookupFunction;
  /** Aborts the try (its connection closed): a failure "cancelled", not retryable. */
  signal?: AbortSignal;
}

/** What one try ended with: a final response (the body only for 200/203), or a failure. */
export type HttpOutcome =
  | { type: "response"; status: number; headers: IncomingHttpHeaders; body?: Buffer }
  | HttpFailure;

export interface HttpFailure {
  type: "failure";
  reason: string;
  /** a transient fault: trying again may work */
  retryable: boolean;
  /** the server could not be reached or answered nothing usable (a cached copy may stand in) */
  unreachable: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPTED_TYPES = new Set(["application/octet-stream", "binary/octet-stream"]);

/** `30 s`, `0.8 s`: a duration for a reason. */
export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${s >= 10 ? Math.round(s) : Number(s.toFixed(s < 1 ? 2 : 1))} s`;
}

function failure(reason: string, retryable: boolean, unreachable = false): HttpFailure {
  return { type: "failure", reason, retryable, unreachable };
}

/** A network error as a failure, by its system code (never by its message text). */
function networkFailure(error: unknown): HttpFailure {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? "";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_FAIL" || code === "EAI_NODATA") return failure("DNS lookup failed", code === "EAI_AGAIN", true);
  if (code === "ECONNREFUSED") return failure("connection refused", true, true);
  if (code === "ECONNRESET" || code === "EPIPE" || code === "ECONNABORTED") return failure("connection reset", true, true);
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EHOSTDOWN" || code === "ENETDOWN") return failure("host unreachable", true, true);
  if (code === "ETIMEDOUT") return failure("connection timed out", true, true);
  if (/^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(code)) return failure(`TLS error (${code})`, false);
  if (code === "HPE_INVALID_CONSTANT" || code.startsWith("HPE_")) return failure("invalid HTTP response", false);
  return failure(`network error (${code || (error instanceof Error ? error.message.slice(0, 80) : "unknown")})`, false);
}

/** Why a Content-Type is not an image's, or null when it may be one (image/*, octet-stream, none). */
function contentTypeProblem(header: string | undefined): string | null {
  const type = (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "" || type.startsWith("image/") || ACCEPTED_TYPES.has(type)) return null;
  return `not an image (Content-Type ${type.replace(/[^\x21-\x7e]/g, "?").slice(0, 60)})`;
}

/** One try: GET `start`, following redirects, all within `limits.timeoutMs`. */
export async function httpGet(start: string, context: HttpContext): Promise<HttpOutcome> {
  const { limits } = context;
  const deadline = Date.now() + limits.timeoutMs;
  let url = new URL(start);
  const seen = new Set([url.href]);
  for (let redirects = 0; ; redirects++) {
    const outcome = await requestOnce(url, context, deadline);
    if (outcome.type === "failure" || !REDIRECTS.has(outcome.status) || outcome.headers.location === undefined) return outcome;
    let next: URL;
    try {
      next = new URL(outcome.headers.location, url);
    } catch {
      return failure("redirect to an invalid URL", false);
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") return failure(`redirect to unsupported URL scheme "${next.protocol.slice(0, 20)}"`, false);
    if (url.protocol === "https:" && next.protocol === "http:") return failure("redirect from https to http refused", false);
    if (seen.has(next.href)) return failure("redirect loop", false);
    if (redirects >= limits.maxRedirects) return failure(`too many redirects (more than ${limits.maxRedirects})`, false);
    seen.add(next.href);
    url = next;
  }
}

/** One request, ending by the deadline; a 200/203 body is read whole (up to maxBytes). */
function requestOnce(url: URL, context: HttpContext, deadline: number): Promise<HttpOutcome> {
  const { limits } = context;
  return new Promise((resolve) => {
    let settled = false;
    let connectTimer: NodeJS.Timeout | undefined;
    let request: http.ClientRequest | undefined;
    const finish = (outcome: HttpOutcome, abort: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(totalTimer);
      clearTimeout(connectTimer);
      context.signal?.removeEventListener("abort", cancel);
      if (abort) request?.destroy();
      resolve(outcome);
    };
    const cancel = () => finish(failure("cancelled", false), true);
    const totalTimer = setTimeout(() => finish(failure(`timed out after ${formatSeconds(limits.timeoutMs)}`, true, true), true), Math.max(0, deadline - Date.now()));
    if (context.signal?.aborted) {
      cancel();
      return;
    }
    context.signal?.addEventListener("abort", cancel, { once: true });
    const client = url.protocol === "https:" ? https : http;
    try {
      request = client.request(url, { method: "GET", headers: context.headers, agent: url.protocol === "https:" ? context.agents.https : context.agents.http, ...(context.lookup ? { lookup: context.lookup } : {}) });
    } catch (error) {
      // Only a URL Node cannot send (e.g. bad characters in the host) gets here.
      finish(failure(`not a valid URL (${(error as NodeJS.ErrnoException).code ?? "invalid"})`, false), false);
      return;
    }
    request.on("error", (error) => finish(networkFailure(error), true));
    request.on("socket", (socket) => {
      if (!socket.connecting) return;
      connectTimer = setTimeout(() => finish(failure(`no answer within ${formatSeconds(limits.connectTimeoutMs)} (connect)`, true, true), true), limits.connectTimeoutMs);
      socket.once("connect", () => clearTimeout(connectTimer));
    });
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      if (status !== 200 && status !== 203) {
        // Nothing of the body is needed: drop the connection rather than read an error page.
        finish({ type: "response", status, headers: response.headers }, true);
        return;
      }
      const typeProblem = contentTypeProblem(response.headers["content-type"]);
      if (typeProblem) return finish(failure(typeProblem, false), true);
      // Asked for identity; a server that compresses anyway sends bytes that are not the image.
      const encoding = response.headers["content-encoding"]?.trim().toLowerCase();
      if (encoding && encoding !== "identity") return finish(failure(`compressed by the server (Content-Encoding ${encoding.slice(0, 40)}), which semsearch did not ask for`, false), true);
      const declared = Number(response.headers["content-length"]);
      if (Number.isFinite(declared) && declared > limits.maxBytes) return finish(failure(`larger than ${formatBytes(limits.maxBytes)}`, false), true);
      const chunks: Buffer[] = [];
      let received = 0;
      response.on("data", (chunk: Buffer) => {
        received += chunk.byteLength;
        if (received > limits.maxBytes) finish(failure(`larger than ${formatBytes(limits.maxBytes)}`, false), true);
        else chunks.push(chunk);
      });
      response.on("error", (error) => finish(networkFailure(error), true));
      response.on("end", () => {
        if (!response.complete) return finish(failure("connection reset", true, true), true);
        finish({ type: "response", status, headers: response.headers, body: Buffer.concat(chunks, received) }, false);
      });
      response.on("close", () => finish(failure("connection reset", true, true), true));
    });
    request.end();
  });
}
