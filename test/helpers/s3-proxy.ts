/**
 * A loopback HTTP proxy in front of the tests' S3 server (see s3.ts): it counts and records the
 * requests that pass, and can make the store ignore `If-None-Match` (create-if-absent), as some
 * S3-compatible stores do, so that a test can check semsearch refuses such a store.
 *
 * Point a command at it with `{ ...s3Env(), AWS_ENDPOINT_URL: proxy.url }`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { s3Env } from "./s3.js";

export interface S3ProxyOptions {
  /**
   * Drop `If-None-Match` from every request, so that a PUT of an existing key replaces it. Clients
   * sign that header, and the server refuses a request whose signed header is missing, so the proxy
   * also drops the signature (`Authorization`): the bucket must be made with
   * `freshBucket(prefix, { anonymous: true })`, which lets unsigned requests read and write it.
   */
  stripIfNoneMatch?: boolean;
  /**
   * Answer 200 where the server refused a conditional write with 412: a store that claims to have
   * written what it did not. Works on any bucket (nothing is re-signed) but the object is unchanged.
   */
  hidePreconditionFailed?: boolean;
}

export interface ProxiedRequest {
  method: string;
  /** path and query, decoded: `/bucket/key?list-type=2&prefix=…` */
  path: string;
  /** the `Range` header, if any */
  range?: string;
  status: number;
}

export interface S3Proxy {
  url: string;
  /** Requests answered since the start or the last `reset()`, in the order the server answered them. */
  requests: ProxiedRequest[];
  reset(): void;
  close(): Promise<void>;
}

/** Starts the proxy on an ephemeral 127.0.0.1 port, forwarding to the server in AWS_ENDPOINT_URL. */
export async function startS3Proxy(options: S3ProxyOptions = {}): Promise<S3Proxy> {
  const target = new URL(s3Env().AWS_ENDPOINT_URL as string);
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((request, response) => {
    // The Host header is kept as the client sent it: it is part of what the client signed.
    const headers = { ...request.headers };
    if (options.stripIfNoneMatch) {
      delete headers["if-none-match"];
      delete headers.authorization;
    }
    const upstream = http.request({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers }, (answer) => {
      const status = answer.statusCode ?? 502;
      // Recorded before the client can have its answer, so a test reads a complete list after it.
      const entry = { method: request.method ?? "", path: decodeURIComponent(request.url ?? ""), status };
      requests.push(request.headers.range ? { ...entry, range: request.headers.range } : entry);
      if (status === 412 && options.hidePreconditionFailed) {
        answer.resume();
        response.writeHead(200, { etag: '"0"', "content-length": "0" }).end();
        return;
      }
      response.writeHead(status, answer.headers);
      answer.pipe(response);
    });
    upstream.on("error", (error) => {
      response.writeHead(502, { "content-type": "text/plain" });
      response.end(`s3-proxy: ${error.message}`);
    });
    request.pipe(upstream);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    reset: () => void requests.splice(0),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
