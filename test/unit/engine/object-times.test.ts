/**
 * An object's times: an add takes its time when it starts, before it waits for the write lock, so an
 * add that waited while another created the object must not date its update before that creation.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Engine } from "../../../src/engine/index.js";

describe("created_at and updated_at", () => {
  it("an update stamped before the object's creation (it waited for the lock) is dated at the creation, never before", async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "times-")), "project");
    const later = new Engine({ projectDir: dir, now: () => new Date("2026-01-02T00:00:00.000Z") });
    const earlier = new Engine({ projectDir: dir, now: () => new Date("2026-01-01T00:00:00.000Z") });
    try {
      await later.addObjects([{ source: "first", text: '{"id":"x","v":1}' }]);
      await earlier.addObjects([{ source: "second", text: '{"id":"x","v":2}' }]);
      const object = await earlier.getObject("x");
      expect(object.object).toEqual({ id: "x", v: 2 });
      expect(object.created_at).toBe("2026-01-02T00:00:00.000Z");
      expect(object.updated_at).toBe("2026-01-02T00:00:00.000Z");
    } finally {
      await later.close();
      await earlier.close();
    }
  });
});
