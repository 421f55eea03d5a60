/** Paths inside a database for messages: local directories joined as paths, addresses with `/`. */
import { describe, expect, it } from "vitest";
import { inside, isRemote, parentOf } from "../../../src/engine/store/where.js";

describe("where a database is", () => {
  it("tells an address from a local path", () => {
    expect(isRemote("s3://b/p/data")).toBe(true);
    expect(isRemote("gs://b")).toBe(true);
    expect(isRemote("/srv/p/data")).toBe(false);
    expect(isRemote("relative/s3:/x")).toBe(false);
  });

  it("joins parts and finds the parent, keeping an address's scheme and bucket", () => {
    expect(inside("s3://b/p/data", "objects.lance", "_versions")).toBe("s3://b/p/data/objects.lance/_versions");
    expect(inside("s3://b/p/data/", "t.lance")).toBe("s3://b/p/data/t.lance");
    expect(inside("/srv/p/data", "t.lance")).toBe("/srv/p/data/t.lance");
    expect(parentOf("s3://b/p/data")).toBe("s3://b/p");
    expect(parentOf("s3://b/data/")).toBe("s3://b");
    expect(parentOf("s3://b")).toBe("s3://b");
    expect(parentOf("/srv/p/data")).toBe("/srv/p");
  });
});
