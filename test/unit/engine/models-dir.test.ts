/** Where models are kept: SEMSEARCH_MODELS, else the XDG cache directory (an absolute one only), else ~/.cache. */
import { homedir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { modelsDir } from "../../../src/engine/embedding/models-dir.js";

describe.skipIf(process.platform !== "linux")("modelsDir", () => {
  const saved = { models: process.env.SEMSEARCH_MODELS, cache: process.env.XDG_CACHE_HOME };
  afterEach(() => {
    for (const [name, value] of [["SEMSEARCH_MODELS", saved.models], ["XDG_CACHE_HOME", saved.cache]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("is SEMSEARCH_MODELS, made absolute", () => {
    process.env.SEMSEARCH_MODELS = "rel/models";
    expect(modelsDir()).toBe(path.resolve("rel/models"));
  });

  it("is under an absolute XDG_CACHE_HOME, and under ~/.cache when it is unset, empty or relative", () => {
    delete process.env.SEMSEARCH_MODELS;
    process.env.XDG_CACHE_HOME = "/var/cache/me";
    expect(modelsDir()).toBe("/var/cache/me/semsearch/models");
    for (const value of [undefined, "", "rel", "./cache"]) {
      if (value === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = value;
      expect(modelsDir()).toBe(path.join(homedir(), ".cache", "semsearch", "models"));
    }
  });
});
