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
          // Three files at a time on 2 cores: e2e tests wait on the CLI subprocesses they start (and,
          // for bucket projects, on the S3 server), so the cores sat a third idle with two (measured:
          // the whole `npm test` 11 min 25 s with two; 9 min 47 s to 10 min 39 s with three; 10 min
          // 29 s with four).
          maxWorkers: 3,
          sequence: { groupOrder: 1 }, // after the unit tests
          testTimeout: 180_000,
          hookTimeout: 180_000,
          expect: { requireAssertions: true },
        },
      },
    ],
  },
});
