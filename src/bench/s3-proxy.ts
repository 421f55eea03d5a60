/**
 * A counting HTTP proxy for `npm run bench:s3`, on 127.0.0.1 in front of the S3 server: every request
 * that passes is recorded as a kind (method and the key's shape, ids blanked) with the time the server
 * took to answer it (until its answer's headers) and the size of its answer, so that a phase's requests are the ones recorded
 * between two marks. The same idea as the tests' proxy
 * (test/helpers/s3-proxy.ts), without its fault injection. Headers pass unchanged: the Host header is
 * part of what the client signed.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  kind: string;
  /** From the request's arrival at the proxy to the server's answer's headers, ms. */
  ms: number;
  /** The answer's Content-Length (0 when it has none). */
  bytes: number;
}

export interface CountingProxy {
  url: string;
  /** Where the next request will be recorded: `since(mark())` later gives the requests in between. */
  mark(): number;
  /** The requests answered since `mark`, in the order the server answered them. */
  since(mark: number): ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * A request's kind: the method (LIST for a listing) and the key below the project (the bench's
 * projects are `s3://<bucket>/<one word>`), with ids and numbers blanked and an index's tables named
 * `index`: `GET index.lance/_indices/*\/part_*_docs.lance`, `LIST objects.lance/_versions/`,
 * `GET state/keys.json/*`.
 */
export function requestKind(method: string, rawPath: string): string {
  const url = new URL(rawPath, "http://proxy");
  const isList = method === "GET" && url.searchParams.has("list-type");
  // A listing names the bucket in its path and the key in `prefix`; any other request, both in its path.
  const key = isList ? (url.searchParams.get("prefix") ?? "") : decodeURIComponent(url.pathname).replace(/^\/+[^/]+\/?/, "");
  const shape = key
    .replace(/^[^/]*\/?/, "") // the project's prefix
    .replace(/^data\//, "")
    .replace(/index_idx_[a-z0-9]+/g, "index")
    .replace(/idx_[a-z0-9]+/g, "idx")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "*")
    .replace(/[0-9a-z]{20,}/g, "*")
    .replace(/\d+/g, "*");
  return `${isList ? "LIST" : method} ${shape}`;
}

/** Starts the proxy on an ephemeral loopback port, forwarding to `target` (the S3 endpoint URL). */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const to = new URL(target);
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((request, response) => {
    const started = performance.now();
    const upstream = http.request({ host: to.hostname, port: to.port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
      // (recorded before the client can have its answer, so a client that has it finds it recorded)
      requests.push({ kind: requestKind(request.method ?? "", request.url ?? "/"), ms: performance.now() - started, bytes: Number(answer.headers["content-length"] ?? 0) || 0 });
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on("error", (error) => {
      response.writeHead(502, { "content-type": "text/plain" });
      response.end(`s3 bench proxy: ${error.message}`);
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mark: () => requests.length,
    since: (mark) => requests.slice(mark),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
