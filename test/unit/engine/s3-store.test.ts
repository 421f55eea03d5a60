/**
 * The state store on S3: how the endpoint is read from the environment (pure), and, against a real
 * S3-compatible server (.ci/s3-server: Ceph RGW on 127.0.0.1; skipped without one), create-if-absent,
 * listing, the check that refuses a store ignoring `If-None-Match`, and each fault named, exit 6.
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, describe, expect, it, vi } from "vitest";
import { EnvironmentError, UsageError } from "../../../src/engine/errors.js";
import { s3Config } from "../../../src/engine/state/s3-config.js";
import { S3StateStore } from "../../../src/engine/state/s3-store.js";
import { s3Available, s3TestStore, testBucket } from "../../helpers/s3-state.js";

describe("the endpoint, from the environment", () => {
  it("AWS itself by default, in us-east-1 unless a region is set", () => {
    expect(s3Config({})).toEqual({ region: "us-east-1", forcePathStyle: false, allowHttp: false });
    expect(s3Config({ AWS_DEFAULT_REGION: "eu-west-1" }).region).toBe("eu-west-1");
    expect(s3Config({ AWS_REGION: "eu-north-1", AWS_DEFAULT_REGION: "eu-west-1" }).region).toBe("eu-north-1");
  });

  it("an S3-compatible server by path-style addresses; AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL", () => {
    expect(s3Config({ AWS_ENDPOINT_URL: "https://s3.example.com/" })).toMatchObject({ endpoint: "https://s3.example.com", forcePathStyle: true });
    expect(s3Config({ AWS_ENDPOINT_URL: "https://a.example", AWS_ENDPOINT_URL_S3: "https://b.example" }).endpoint).toBe("https://b.example");
  });

  it.each([
    [{ AWS_ENDPOINT_URL: "http://127.0.0.1:9000" }, "INSECURE_ENDPOINT", /AWS_ALLOW_HTTP=true/],
    [{ AWS_ENDPOINT_URL: "ftp://x" }, "INVALID_ENDPOINT", /https:\/\//],
    [{ AWS_ENDPOINT_URL: "not a url" }, "INVALID_ENDPOINT", /store's address/],
    [{ AWS_ENDPOINT_URL: "https://key:secret@s3.example.com" }, "INVALID_ENDPOINT", /AWS_ACCESS_KEY_ID/],
  ])("%j is refused (%s)", (env, code, hint) => {
    let error: unknown;
    try {
      s3Config(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).code).toBe(code);
    expect((error as UsageError).hint).toMatch(hint);
    expect((error as UsageError).message).not.toContain("secret");
  });

  it("plain HTTP is allowed with AWS_ALLOW_HTTP=true", () => {
    expect(s3Config({ AWS_ENDPOINT_URL: "http://127.0.0.1:9000", AWS_ALLOW_HTTP: "true" })).toMatchObject({ endpoint: "http://127.0.0.1:9000", allowHttp: true });
  });
});

const onServer = describe.skipIf(!s3Available());

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<EnvironmentError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EnvironmentError);
  return error as EnvironmentError;
}

onServer("on a real S3-compatible server", () => {
  const opened: S3StateStore[] = [];
  const store = async () => {
    const made = await s3TestStore();
    opened.push(made);
    return made;
  };
  afterAll(() => {
    for (const made of opened) made.close();
  });

  it("creates a record once; the second create is refused and changes nothing", async () => {
    const s = await store();
    expect(await s.createIfAbsent("a/b", "one")).toBe(true);
    expect(await s.createIfAbsent("a/b", "two")).toBe(false);
    const record = await s.get("a/b");
    expect(record?.body).toBe("one");
    expect(Math.abs((record?.writtenAt ?? 0) - (await s.now()))).toBeLessThan(5_000); // the store's clock, to its second
    expect(await s.get("a/missing")).toBeNull();
  });

  it("of concurrent creates of one key, exactly one wins", async () => {
    const s = await store();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.createIfAbsent("k", String(i))));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("lists a folder's records and subfolders by name, within the project's prefix only", async () => {
    const [s, other] = [await store(), await store()];
    for (const key of ["f/b", "f/a", "f/B", "f/sub/x"]) await s.createIfAbsent(key, "");
    await other.createIfAbsent("f/c", "");
    expect(await s.list("f")).toEqual(["B", "a", "b", "sub"]);
    expect(await s.list("none")).toEqual([]);
    await s.remove("f/a");
    await s.remove("f/a");
    expect(await s.list("f")).toEqual(["B", "b", "sub"]);
    expect(await other.list("f")).toEqual(["c"]);
  });

  it("the server honours create-if-absent: the check passes and leaves nothing", async () => {
    const s = await store();
    await s.checkConditionalWrites();
    expect(await s.list("probe")).toEqual([]);
  });

  // A proxy in front of the server answers 200 where the server refused a second write with 412: to
  // the client, a store that ignores If-None-Match (as some S3-compatible servers do).
  it("a store that accepts the second write is refused with exit 6, naming it", async () => {
    const target = new URL(process.env.AWS_ENDPOINT_URL as string);
    const proxy = http.createServer((request, response) => {
      const forward = http.request({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
        if (answer.statusCode === 412) {
          answer.resume();
          response.writeHead(200, { etag: '"0"', "content-length": "0" }).end();
          return;
        }
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      request.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const s = await S3StateStore.open(await testBucket(), "lying", s3Config({ ...process.env, AWS_ENDPOINT_URL: endpoint }));
      opened.push(s);
      const error = await failure(s.checkConditionalWrites());
      expect(error.code).toBe("STORE_NOT_CONDITIONAL");
      expect(error.exitCode).toBe(6);
      expect(error.message).toContain("s3://");
      expect(error.message).toContain("a second write of one key was accepted");
    } finally {
      proxy.close();
    }
  });

  it("wrong credentials: S3_ACCESS_DENIED, without the secret in the message", async () => {
    const secret = "wrong-secret-1234567890";
    const previous = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_SECRET_ACCESS_KEY = secret;
    try {
      const s = await S3StateStore.open(await testBucket(), "x", s3Config(process.env));
      opened.push(s);
      const error = await failure(s.list("f"));
      expect(error.code).toBe("S3_ACCESS_DENIED");
      expect(`${error.message} ${error.hint}`).not.toContain(secret);
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = previous.secret;
    }
  });

  it("a bucket that does not exist: S3_NO_BUCKET naming the project", async () => {
    const s = await S3StateStore.open("semsearch-no-such-bucket-x1", "p", s3Config(process.env));
    opened.push(s);
    const error = await failure(s.createIfAbsent("k", ""));
    expect(error.code).toBe("S3_NO_BUCKET");
    expect(error.message).toContain("s3://semsearch-no-such-bucket-x1/p");
    // (semsearch never makes a bucket: the hint says where the commands that do are)
    expect(error.hint).toContain("docs/deploy.md");
  });

  it("an endpoint where nothing listens: S3_UNREACHABLE", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const s = await S3StateStore.open(await testBucket(), "p", s3Config({ ...process.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` }));
    opened.push(s);
    const error = await failure(s.get("k"));
    expect(error.code).toBe("S3_UNREACHABLE");
  });

  it("an endpoint that accepts and never answers: S3_UNREACHABLE once its attempts time out, and nothing printed", async () => {
    const silent = net.createServer(() => {}); // (holds each connection open, answers nothing)
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const warn = vi.spyOn(console, "warn");
    try {
      const port = (silent.address() as AddressInfo).port;
      const s = await S3StateStore.open(await testBucket(), "p", s3Config({ ...process.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` }), { requestTimeoutMs: 300, maxAttempts: 2 });
      opened.push(s);
      const error = await failure(s.get("k"));
      expect(error.code).toBe("S3_UNREACHABLE");
      expect(error.message).toMatch(/ETIMEDOUT|TimeoutError/);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      silent.close();
    }
  });
});
