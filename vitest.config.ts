import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["test/helpers/global-setup.ts"],
    expect: { requireAssertions: true },
    projects: [
      {
        test: {
          name: "unit",
          sequence: { groupOrder: 0 },
          include: ["test/unit/**/*.test.ts"],
          // Two files at a time on 2 cores (vitest's default is cores − 1 = 1 worker, which left one idle).
          maxWorkers: 2,
          testTimeout: 60_000,
          expect: { requireAssertions: true },
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          // Two files at a time: e2e tests mostly wait on the CLI subprocesses they start, so this
          // halves the suite's time on 2 cores (vitest's default is cores − 1 = 1 worker).
          maxWorkers: 2,
          sequence: { groupOrder: 1 }, // after the unit tests, so at most two files run at once
          testTimeout: 180_000,
          hookTimeout: 180_000,
          expect: { requireAssertions: true },
        },
      },
    ],
  },
});
