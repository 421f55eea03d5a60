/**
 * The store on a real S3-compatible server (.ci/s3-server: Ceph RGW; skipped without one): the object
 * table, an index table with its full-text and vector searches, a snapshot, optimizing, the fence,
 * and a damaged table named by its address. The same operations as on a local directory, through the
 * same code: only the checks of local folders are skipped.
 */
import { afterAll, describe, expect, it } from "vitest";
import { objectRow, unit } from "../../helpers/store-rows.js";
import { EnvironmentError } from "../../../src/engine/errors.js";
import { LanceStore } from "../../../src/engine/store/lance-store.js";
import { scoredIds } from "../../../src/engine/store/rows.js";
import { s3Available, testBucket } from "../../helpers/s3-state.js";

const row = objectRow;

describe.skipIf(!s3Available())("the store on S3", () => {
  const opened: LanceStore[] = [];
  const open = async (prefix: string, expectedTables?: () => string[]) => {
    const store = await LanceStore.open(`s3://${await testBucket()}/${prefix}/data`, expectedTables ? { expectedTables } : {});
    opened.push(store);
    return store;
  };
  afterAll(() => {
    for (const store of opened) store.close();
  });

  it("stores, lists and searches as on a local directory", async () => {
    const store = await open("p1");
    await store.upsertObjects([row("a", 1), row("b", 2), row("c", 3)]);
    await store.upsertObjects([row("a", 4)]);
    expect(await store.countObjects()).toBe(3);
    expect((await store.listObjects(0, 10)).map((object) => object.id)).toEqual(["a", "b", "c"]);
    await store.createIndexTable("index_t", 4);
    await store.upsertIndexRows("index_t", [
      { id: "x", seq: 1, text: "red apples and pears", vector: unit(1, 0, 0, 0) },
      { id: "y", seq: 2, text: "green pears", vector: unit(0, 1, 0, 0) },
    ]);
    await store.optimizeIndexTable("index_t");
    const snapshot = store.snapshot();
    expect([...(await snapshot.textSearch("index_t", "pears", 10)).ids].sort()).toEqual(["x", "y"]);
    expect(scoredIds(await snapshot.vectorSearch("index_t", unit(1, 0.1, 0, 0), 1)).map((hit) => hit.id)).toEqual(["x"]);
    await store.fence(["objects", "index_t"]);
    await store.deleteObjects(["b"]);
    expect(await store.countObjects()).toBe(2);
    const reopened = await open("p1");
    expect(await reopened.countObjects()).toBe(2);
  });

  it("a table the records list that is not there is exit 6 naming its address", async () => {
    const store = await open("p2", () => ["index_idx_gone"]);
    const error = await store.upsertObjects([row("a", 1)]).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(EnvironmentError);
    expect((error as EnvironmentError).code).toBe("CORRUPT_TABLE");
    expect((error as EnvironmentError).message).toContain(`s3://${await testBucket()}/p2/data/index_idx_gone.lance`);
  });
});
