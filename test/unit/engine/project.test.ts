import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EMPTY_PROGRESS, Project } from "../../../src/engine/project.js";

describe("Project", () => {
  const project = new Project(path.join(mkdtempSync(path.join(tmpdir(), "semsearch-project-")), "p"));
  project.init();

  it("gives a fresh progress record per unsaved index, so changing one changes no other", () => {
    const first = project.progress("idx_a");
    first.processingSeq = 7;
    first.errors.x = { seq: 1, message: "m" };
    expect(project.progress("idx_b")).toEqual({ indexedSeq: 0, optimizedSeq: 0, processingSeq: null, errors: {} });
    expect(EMPTY_PROGRESS.errors).toEqual({});
  });

  it("reserves sequence numbers without reuse", () => {
    expect(project.reserveSeq(3)).toBe(1);
    expect(project.reserveSeq(2)).toBe(4);
    expect(project.lastSeq()).toBe(5);
  });

  it("saves and reads the catalog and progress atomically", () => {
    project.saveProgress("idx_a", { indexedSeq: 3, optimizedSeq: 1, processingSeq: null, errors: {} });
    expect(project.progress("idx_a").indexedSeq).toBe(3);
    project.saveIndexes([{ id: "idx_a", configuration: { index_type: { name: "text" } }, model: "m", dimension: 2, created_at: "t" }]);
    expect(project.indexes().map((index) => index.id)).toEqual(["idx_a"]);
  });
});
