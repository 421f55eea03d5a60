import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { encodeOnnxModel, OnnxType, type OnnxGraph } from "../../../src/engine/embedding/onnx-proto.js";
import { convertTfGraph, UnsupportedGraphError, type TfNode, type TfWeight } from "../../../src/engine/embedding/tf-graph-onnx.js";

const ort = createRequire(import.meta.url)("onnxruntime-node") as typeof import("onnxruntime-node");

type Feed = Record<string, { type: "int32" | "float32"; data: number[]; dims: number[] }>;

/** Runs a converted graph through onnxruntime: the output's dims and values. */
async function run(graph: OnnxGraph, feed: Feed): Promise<{ dims: readonly number[]; data: number[] }> {
  const session = await ort.InferenceSession.create(encodeOnnxModel({ irVersion: 8, opset: 18, producer: "test", graph }));
  const feeds = Object.fromEntries(
    Object.entries(feed).map(([name, { type, data, dims }]) => [name, new ort.Tensor(type, type === "int32" ? Int32Array.from(data) : Float32Array.from(data), dims)]),
  );
  const outputs = await session.run(feeds);
  const output = outputs[graph.outputs[0]?.name as string] as import("onnxruntime-node").Tensor;
  const result = { dims: output.dims, data: Array.from(output.data as ArrayLike<number | boolean>, Number) };
  await session.release();
  return result;
}

function ints(name: string, values: number[], shape = [values.length]): TfWeight {
  return { name, dtype: "int32", shape, data: new Uint8Array(Int32Array.from(values).buffer) };
}

function floats(name: string, values: number[], shape: number[]): TfWeight {
  return { name, dtype: "float32", shape, data: new Uint8Array(Float32Array.from(values).buffer) };
}

const placeholder = (name: string, type: number, dims: number[]): TfNode => ({
  name,
  op: "Placeholder",
  attr: { dtype: { type }, shape: { shape: { dim: dims.map((size) => ({ size: String(size) })) } } },
});
const constant = (name: string): TfNode => ({ name, op: "Const" });
const FLOAT = 1;
const INT32 = 3;

function convert(nodes: TfNode[], weights: TfWeight[], output: string): OnnxGraph {
  return convertTfGraph(nodes, new Map(weights.map((weight) => [weight.name, weight])), { outputs: [output], name: "test" });
}

describe("TensorFlow graph → ONNX", () => {
  it("StridedSlice: begin and end masks, negative indices and a shrunk axis", async () => {
    // x[:, 1:-1] and x[:, -1] of a 2×4 matrix
    const nodes = [
      placeholder("x", FLOAT, [-1, 4]),
      constant("b"),
      constant("e"),
      constant("s"),
      constant("b2"),
      constant("e2"),
      { name: "mid", op: "StridedSlice", input: ["x", "b", "e", "s"], attr: { begin_mask: { i: "1" }, end_mask: { i: "1" } } },
      { name: "last", op: "StridedSlice", input: ["x", "b2", "e2", "s"], attr: { begin_mask: { i: "1" }, end_mask: { i: "1" }, shrink_axis_mask: { i: "2" } } },
    ] satisfies TfNode[];
    const weights = [ints("b", [0, 1]), ints("e", [0, -1]), ints("s", [1, 1]), ints("b2", [0, -1]), ints("e2", [0, 0])];
    const x = { x: { type: "float32" as const, data: [1, 2, 3, 4, 5, 6, 7, 8], dims: [2, 4] } };
    expect(await run(convert(nodes, weights, "mid"), x)).toEqual({ dims: [2, 2], data: [2, 3, 6, 7] });
    expect(await run(convert(nodes, weights, "last"), x)).toEqual({ dims: [2], data: [4, 8] });
  });

  it("Where, SparseToDense and ScatterNd keep TensorFlow's meaning", async () => {
    const nodes = [
      placeholder("indices", 9, [-1, 2]),
      placeholder("values", 9, [-1]),
      constant("shape"),
      constant("zero"),
      { name: "dense", op: "SparseToDense", input: ["indices", "shape", "values", "zero"], attr: { T: { type: INT32 } } },
      { name: "positive", op: "Greater", input: ["dense", "zero"] },
      { name: "where", op: "Where", input: ["positive"] },
      { name: "scattered", op: "ScatterNd", input: ["indices", "values", "shape"], attr: { T: { type: INT32 } } },
    ] satisfies TfNode[];
    const weights = [ints("shape", [2, 3]), ints("zero", [0], [])];
    const feed: Feed = { indices: { type: "int32", data: [0, 1, 1, 2], dims: [2, 2] }, values: { type: "int32", data: [7, 9], dims: [2] } };
    expect(await run(convert(nodes, weights, "dense"), feed)).toEqual({ dims: [2, 3], data: [0, 7, 0, 0, 0, 9] });
    expect(await run(convert(nodes, weights, "where"), feed)).toEqual({ dims: [2, 2], data: [0, 1, 1, 2] });
    expect(await run(convert(nodes, weights, "scattered"), feed)).toEqual({ dims: [2, 3], data: [0, 7, 0, 0, 0, 9] });
  });

  it("Pack, SplitV (second output), a transposed BatchMatMul and a 1×1 Conv2D", async () => {
    const nodes = [
      placeholder("x", FLOAT, [2, 2]),
      constant("sizes"),
      constant("axis1"),
      constant("kernel"),
      { name: "pair", op: "Pack", input: ["x", "x"], attr: { axis: { i: "0" } } },
      { name: "split", op: "SplitV", input: ["x", "sizes", "axis1"], attr: { num_split: { i: "2" } } },
      { name: "second", op: "Identity", input: ["split:1"] },
      { name: "gram", op: "BatchMatMul", input: ["x", "x"], attr: { adj_x: { b: false }, adj_y: { b: true } } },
      { name: "conv", op: "Conv2D", input: ["x", "kernel"], attr: { strides: { list: { i: ["1", "1", "1", "1"] } }, dilations: { list: { i: ["1", "1", "1", "1"] } }, data_format: { s: Buffer.from("NHWC").toString("base64") } } },
    ] satisfies TfNode[];
    const weights = [ints("sizes", [1, 1]), ints("axis1", [1], []), floats("kernel", [1, 2, 3, 4], [1, 1, 2, 2])];
    const x = { x: { type: "float32" as const, data: [1, 2, 3, 4], dims: [2, 2] } };
    expect(await run(convert(nodes, weights, "pair"), x)).toEqual({ dims: [2, 2, 2], data: [1, 2, 3, 4, 1, 2, 3, 4] });
    expect(await run(convert(nodes, weights, "second"), x)).toEqual({ dims: [2, 1], data: [2, 4] });
    // x · xᵀ
    expect(await run(convert(nodes, weights, "gram"), x)).toEqual({ dims: [2, 2], data: [5, 11, 11, 25] });
    // x · [[1, 2], [3, 4]]
    expect(await run(convert(nodes, weights, "conv"), x)).toEqual({ dims: [2, 2], data: [7, 10, 15, 22] });
  });

  it("an op it does not know fails the conversion, naming the node", () => {
    const nodes = [placeholder("x", FLOAT, [2]), { name: "odd/node", op: "Cumsum", input: ["x"] }] satisfies TfNode[];
    expect(() => convert(nodes, [], "odd/node")).toThrow(UnsupportedGraphError);
    expect(() => convert(nodes, [], "odd/node")).toThrow("cannot convert Cumsum node odd/node: the op is not supported");
  });

  it("a convolution it cannot express as a matrix product is refused, not approximated", () => {
    const nodes = [
      placeholder("x", FLOAT, [1, 3, 3, 1]),
      constant("k"),
      { name: "conv", op: "Conv2D", input: ["x", "k"], attr: { strides: { list: { i: ["1", "1", "1", "1"] } }, data_format: { s: Buffer.from("NHWC").toString("base64") } } },
    ] satisfies TfNode[];
    expect(() => convert(nodes, [floats("k", Array(9).fill(1), [3, 3, 1, 1])], "conv")).toThrow("only constant 1×1 kernels");
  });

  it("a cycle in the graph is reported, not followed forever", () => {
    const nodes = [
      { name: "a", op: "Identity", input: ["b"] },
      { name: "b", op: "Identity", input: ["a"] },
    ] satisfies TfNode[];
    expect(() => convert(nodes, [], "a")).toThrow("the graph has a cycle");
  });
});

describe("ONNX model bytes", () => {
  it("attributes of every kind the converter writes load in onnxruntime", async () => {
    const graph: OnnxGraph = {
      name: "attributes",
      nodes: [
        { op: "Cast", inputs: ["x"], outputs: ["cast"], attributes: { to: OnnxType.FLOAT } },
        { op: "Transpose", inputs: ["cast"], outputs: ["t"], attributes: { perm: [1, 0] } },
        { op: "Shape", inputs: ["t"], outputs: ["shape"] },
        { op: "ConstantOfShape", inputs: ["shape"], outputs: ["filled"], attributes: { value: { name: "v", type: OnnxType.FLOAT, dims: [1], data: new Uint8Array(Float32Array.from([0.5]).buffer) } } },
        { op: "Add", inputs: ["t", "filled"], outputs: ["y"] },
      ],
      initializers: [],
      inputs: [{ name: "x", type: OnnxType.INT32, dims: ["rows", 2] }],
      outputs: [{ name: "y", type: OnnxType.FLOAT }],
    };
    expect(await run(graph, { x: { type: "int32", data: [1, 2, 3, 4], dims: [2, 2] } })).toEqual({ dims: [2, 2], data: [1.5, 3.5, 2.5, 4.5] });
  });

  it("a fractional number for an integer attribute is refused", () => {
    const graph: OnnxGraph = { name: "g", nodes: [{ op: "Softmax", inputs: ["x"], outputs: ["y"], attributes: { axis: 0.5 } }], initializers: [], inputs: [], outputs: [] };
    expect(() => encodeOnnxModel({ irVersion: 8, opset: 18, producer: "test", graph })).toThrow("attribute axis: 0.5 is not an integer");
  });
});
