/**
 * Converts a TensorFlow.js graph model (the GraphDef of its model.json and its weights) into an ONNX
 * graph that onnxruntime runs: op for op, with TensorFlow's semantics. Written for the bundled
 * Universal Sentence Encoder; an op or an attribute it does not handle fails the conversion by name,
 * never silently. Like TensorFlow.js, 64-bit integers are computed as 32-bit ones (the inputs are
 * int32); ONNX operands that must be int64 (shapes, axes, indices) are cast where they are used.
 * Pure: no I/O.
 */
import { OnnxType, type OnnxAttribute, type OnnxElementType, type OnnxGraph, type OnnxNode, type OnnxTensor, type OnnxValue } from "./onnx-proto.js";

/** One node of the GraphDef as TensorFlow.js's converter writes it. */
export interface TfNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfAttr>;
}

interface TfAttr {
  i?: string | number;
  b?: boolean;
  f?: number;
  s?: string | number[];
  type?: string | number;
  list?: { i?: (string | number)[] };
  shape?: { dim?: { size: string | number }[] };
}

/** A weight (a Const node's value) from the weights manifest. */
export interface TfWeight {
  name: string;
  dtype: "float32" | "int32" | "bool";
  shape: readonly number[];
  /** Little-endian element bytes. */
  data: Uint8Array;
}

export interface ConvertOptions {
  /** Graph outputs (node names, optionally `:k`). */
  outputs: readonly string[];
  name: string;
}

export class UnsupportedGraphError extends Error {
  constructor(node: TfNode, what: string) {
    super(`cannot convert ${node.op} node ${node.name}: ${what}`);
    this.name = "UnsupportedGraphError";
  }
}

/** ONNX's largest slice end: "to the end of the dimension". */
const TO_END = Number.MAX_SAFE_INTEGER;

const TF_TYPES: Record<string, OnnxElementType> = {
  "1": OnnxType.FLOAT,
  DT_FLOAT: OnnxType.FLOAT,
  "3": OnnxType.INT32,
  DT_INT32: OnnxType.INT32,
  "9": OnnxType.INT32, // int64, computed as int32 (as TensorFlow.js does)
  DT_INT64: OnnxType.INT32,
  "10": OnnxType.BOOL,
  DT_BOOL: OnnxType.BOOL,
};

const WEIGHT_TYPES: Record<TfWeight["dtype"], OnnxElementType> = { float32: OnnxType.FLOAT, int32: OnnxType.INT32, bool: OnnxType.BOOL };

/** Ops that map one to one, inputs and outputs in the same order. */
const SAME: Record<string, string> = {
  Add: "Add",
  AddV2: "Add",
  BiasAdd: "Add",
  Sub: "Sub",
  Mul: "Mul",
  RealDiv: "Div",
  Maximum: "Max",
  Minimum: "Min",
  Less: "Less",
  Greater: "Greater",
  LogicalNot: "Not",
  Sin: "Sin",
  Cos: "Cos",
  Tanh: "Tanh",
  Relu: "Relu",
  Sqrt: "Sqrt",
  Identity: "Identity",
  Range: "Range",
};

const REDUCTIONS: Record<string, string> = { Max: "ReduceMax", Sum: "ReduceSum", Mean: "ReduceMean", Prod: "ReduceProd" };

function tensorName(ref: string): string {
  const [node, index] = ref.split(":");
  return index === undefined || index === "0" ? (node as string) : `${node}:${index}`;
}

function int64Bytes(values: readonly number[]): Uint8Array {
  const array = new BigInt64Array(values.map((value) => BigInt(value)));
  return new Uint8Array(array.buffer);
}

class GraphBuilder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxTensor[] = [];
  private fresh = 0;
  private readonly int64Casts = new Map<string, string>();

  name(hint: string): string {
    return `${hint}/__onnx_${this.fresh++}`;
  }

  add(op: string, inputs: readonly string[], output: string, attributes?: Record<string, OnnxAttribute>): string {
    this.nodes.push({ op, inputs, outputs: [output], ...(attributes ? { attributes } : {}) });
    return output;
  }

  /** A new int64 vector constant. */
  int64(hint: string, values: readonly number[]): string {
    const name = this.name(hint);
    this.initializers.push({ name, type: OnnxType.INT64, dims: [values.length], data: int64Bytes(values) });
    return name;
  }

  /** The tensor as int64 (shapes, axes and indices in ONNX), cast once however often it is used. */
  asInt64(tensor: string): string {
    let cast = this.int64Casts.get(tensor);
    if (!cast) {
      cast = this.add("Cast", [tensor], this.name(tensor), { to: OnnxType.INT64 });
      this.int64Casts.set(tensor, cast);
    }
    return cast;
  }
}

/**
 * Converts the graph: every node the outputs depend on, in dependency order. Const nodes become
 * initializers (their values are read from `weights`), Placeholders become int32/float inputs.
 */
export function convertTfGraph(nodes: readonly TfNode[], weights: ReadonlyMap<string, TfWeight>, options: ConvertOptions): OnnxGraph {
  const byName = new Map(nodes.map((node) => [node.name, node]));
  const builder = new GraphBuilder();
  const inputs: OnnxValue[] = [];
  const done = new Set<string>();

  const constant = (ref: string, user: TfNode): number[] => {
    const weight = weights.get(tensorName(ref));
    if (!weight || weight.dtype !== "int32") throw new UnsupportedGraphError(user, `${ref} is not a constant int32 tensor`);
    const copy = weight.data.slice();
    return Array.from(new Int32Array(copy.buffer, 0, copy.length / 4));
  };

  const visit = (name: string, path: Set<string>) => {
    if (done.has(name)) return;
    const node = byName.get(name);
    if (!node) throw new Error(`the graph has no node ${name}`);
    if (path.has(name)) throw new UnsupportedGraphError(node, "the graph has a cycle");
    path.add(name);
    for (const input of node.input ?? []) if (!input.startsWith("^")) visit(input.split(":")[0] as string, path);
    path.delete(name);
    convertNode(node);
    done.add(name);
  };

  const convertNode = (node: TfNode) => {
    const ins = (node.input ?? []).filter((input) => !input.startsWith("^")).map(tensorName);
    const attr = node.attr ?? {};
    const out = node.name;
    const int = (key: string, fallback?: number): number => {
      const value = attr[key]?.i;
      if (value === undefined) {
        if (fallback !== undefined) return fallback;
        throw new UnsupportedGraphError(node, `no attribute ${key}`);
      }
      return Number(value);
    };
    const ints = (key: string): number[] => (attr[key]?.list?.i ?? []).map(Number);
    const bool = (key: string): boolean => attr[key]?.b === true;
    const type = (key: string): OnnxElementType => {
      const value = attr[key]?.type;
      const mapped = value === undefined ? undefined : TF_TYPES[String(value)];
      if (mapped === undefined) throw new UnsupportedGraphError(node, `type ${key}=${String(value)} is not supported`);
      return mapped;
    };
    const text = (key: string): string => {
      const value = attr[key]?.s;
      if (value === undefined) return "";
      return typeof value === "string" ? Buffer.from(value, "base64").toString("latin1") : String.fromCharCode(...value);
    };
    const input = (i: number): string => {
      const value = ins[i];
      if (value === undefined) throw new UnsupportedGraphError(node, `input ${i} is missing`);
      return value;
    };
    const b = builder;

    const same = SAME[node.op];
    if (same) {
      b.add(same, ins, out);
      return;
    }
    const reduction = REDUCTIONS[node.op];
    if (reduction) {
      const axes = b.int64(out, constant(input(1), node));
      b.add(reduction, [input(0), axes], out, { keepdims: bool("keep_dims") ? 1 : 0 });
      return;
    }
    switch (node.op) {
      case "Const": {
        const weight = weights.get(node.name);
        if (!weight) throw new UnsupportedGraphError(node, "its value is not in the weights");
        b.initializers.push({ name: node.name, type: WEIGHT_TYPES[weight.dtype], dims: weight.shape, data: weight.data });
        return;
      }
      case "Placeholder": {
        const dims = (attr.shape?.shape?.dim ?? []).map((dim, i) => (Number(dim.size) < 0 ? `${node.name}_${i}` : Number(dim.size)));
        inputs.push({ name: node.name, type: type("dtype"), dims });
        return;
      }
      case "Square":
        b.add("Mul", [input(0), input(0)], out);
        return;
      case "Rsqrt":
        b.add("Reciprocal", [b.add("Sqrt", [input(0)], b.name(out))], out);
        return;
      case "Softmax":
        b.add("Softmax", [input(0)], out, { axis: -1 });
        return;
      case "Cast":
        b.add("Cast", [input(0)], out, { to: type("DstT") });
        return;
      case "Shape":
        b.add("Cast", [b.add("Shape", [input(0)], b.name(out))], out, { to: OnnxType.INT32 });
        return;
      case "Reshape":
        b.add("Reshape", [input(0), b.asInt64(input(1))], out);
        return;
      case "ExpandDims":
        b.add("Unsqueeze", [input(0), b.int64(out, constant(input(1), node))], out);
        return;
      case "Squeeze": {
        const axes = ints("squeeze_dims");
        b.add("Squeeze", axes.length > 0 ? [input(0), b.int64(out, axes)] : [input(0)], out);
        return;
      }
      case "Transpose":
        b.add("Transpose", [input(0)], out, { perm: constant(input(1), node) });
        return;
      case "ConcatV2": {
        const [axis] = constant(ins[ins.length - 1] as string, node);
        b.add("Concat", ins.slice(0, -1), out, { axis: axis as number });
        return;
      }
      case "Pack": {
        const axis = int("axis", 0);
        const axes = b.int64(out, [axis]);
        b.add("Concat", ins.map((part) => b.add("Unsqueeze", [part, axes], b.name(out))), out, { axis });
        return;
      }
      case "GatherV2": {
        if (int("batch_dims", 0) !== 0) throw new UnsupportedGraphError(node, "batch_dims is not 0");
        const [axis] = constant(input(2), node);
        b.add("Gather", [input(0), input(1)], out, { axis: axis as number });
        return;
      }
      case "GatherNd":
        b.add("GatherND", [input(0), b.asInt64(input(1))], out);
        return;
      case "ScatterNd": {
        // TensorFlow scatters into zeros of the given shape and adds repeated indices.
        const zeros = b.add("ConstantOfShape", [b.asInt64(input(2))], b.name(out), { value: scalarTensor(type("T"), 0) });
        b.add("ScatterND", [zeros, b.asInt64(input(0)), input(1)], out, { reduction: "add" });
        return;
      }
      case "SparseToDense": {
        const dense = b.add("Expand", [input(3), b.asInt64(input(1))], b.name(out));
        b.add("ScatterND", [dense, b.asInt64(input(0)), input(2)], out);
        return;
      }
      case "Where": {
        if (ins.length !== 1) throw new UnsupportedGraphError(node, "only the one-input form (coordinates of true elements) is supported");
        const coordinates = b.add("Transpose", [b.add("NonZero", [input(0)], b.name(out))], b.name(out), { perm: [1, 0] });
        b.add("Cast", [coordinates], out, { to: OnnxType.INT32 });
        return;
      }
      case "MatMul":
      case "BatchMatMul":
      case "BatchMatMulV2": {
        const transposeA = bool(node.op === "MatMul" ? "transpose_a" : "adj_x");
        const transposeB = bool(node.op === "MatMul" ? "transpose_b" : "adj_y");
        if (!transposeA && !transposeB) b.add("MatMul", [input(0), input(1)], out);
        else b.add("Einsum", [input(0), input(1)], out, { equation: `...${transposeA ? "ji" : "ij"},...${transposeB ? "kj" : "jk"}->...ik` });
        return;
      }
      case "Conv2D": {
        // A 1×1 convolution with unit strides is a matrix product over the channels.
        const kernel = weights.get(input(1));
        const ones = (values: number[]) => values.every((value) => value === 1);
        if (!kernel || kernel.shape.length !== 4 || kernel.shape[0] !== 1 || kernel.shape[1] !== 1) throw new UnsupportedGraphError(node, "only constant 1×1 kernels are supported");
        if (!ones(ints("strides")) || !ones(ints("dilations"))) throw new UnsupportedGraphError(node, "only unit strides and dilations are supported");
        if (text("data_format") !== "NHWC") throw new UnsupportedGraphError(node, "only NHWC is supported");
        const matrix = b.name(out);
        b.initializers.push({ name: matrix, type: OnnxType.FLOAT, dims: [kernel.shape[2] as number, kernel.shape[3] as number], data: kernel.data });
        b.add("MatMul", [input(0), matrix], out);
        return;
      }
      case "SplitV": {
        const sizes = constant(input(1), node);
        const [axis] = constant(input(2), node);
        if (sizes.some((size) => size < 0)) throw new UnsupportedGraphError(node, "sizes of -1 are not supported");
        const outputs = sizes.map((_, i) => (i === 0 ? out : `${out}:${i}`));
        b.nodes.push({ op: "Split", inputs: [input(0), b.int64(out, sizes)], outputs, attributes: { axis: axis as number } });
        return;
      }
      case "Slice": {
        const begin = constant(input(1), node);
        const size = constant(input(2), node);
        const ends = begin.map((start, i) => (size[i] === -1 ? TO_END : start + (size[i] as number)));
        b.add("Slice", [input(0), b.int64(out, begin), b.int64(out, ends), b.int64(out, begin.map((_, i) => i))], out);
        return;
      }
      case "StridedSlice": {
        convertStridedSlice(b, node, [input(0), constant(input(1), node), constant(input(2), node), constant(input(3), node)], int);
        return;
      }
      default:
        throw new UnsupportedGraphError(node, "the op is not supported");
    }
  };

  for (const output of options.outputs) visit(output.split(":")[0] as string, new Set());
  const outputs: OnnxValue[] = options.outputs.map((output) => ({ name: tensorName(output), type: outputType(byName.get(output.split(":")[0] as string) as TfNode) }));
  // Constants only the conversion read (a convolution's 4-D kernel, say) are left out.
  const used = new Set(builder.nodes.flatMap((node) => node.inputs));
  const initializers = builder.initializers.filter((tensor) => used.has(tensor.name));
  return { name: options.name, nodes: builder.nodes, initializers, inputs, outputs };
}

function convertStridedSlice(b: GraphBuilder, node: TfNode, [data, begin, end, strides]: [string, number[], number[], number[]], int: (key: string, fallback?: number) => number): void {
  if (int("ellipsis_mask", 0) !== 0 || int("new_axis_mask", 0) !== 0) throw new UnsupportedGraphError(node, "ellipsis and new-axis masks are not supported");
  const beginMask = int("begin_mask", 0);
  const endMask = int("end_mask", 0);
  const shrinkMask = int("shrink_axis_mask", 0);
  const starts: number[] = [];
  const ends: number[] = [];
  const shrink: number[] = [];
  for (let i = 0; i < begin.length; i++) {
    const stride = strides[i] as number;
    if (stride === 0) throw new UnsupportedGraphError(node, "a stride is 0");
    const bit = 1 << i;
    if (shrinkMask & bit) {
      // One element, then the dimension is removed.
      const at = begin[i] as number;
      starts.push(at);
      ends.push(at === -1 ? TO_END : at + 1);
      shrink.push(i);
      continue;
    }
    starts.push(beginMask & bit ? (stride > 0 ? 0 : TO_END) : (begin[i] as number));
    ends.push(endMask & bit ? (stride > 0 ? TO_END : -TO_END) : (end[i] as number));
  }
  const axes = starts.map((_, i) => i);
  const sliced = shrink.length > 0 ? b.name(node.name) : node.name;
  b.add("Slice", [data, b.int64(node.name, starts), b.int64(node.name, ends), b.int64(node.name, axes), b.int64(node.name, strides)], sliced);
  if (shrink.length > 0) b.add("Squeeze", [sliced, b.int64(node.name, shrink)], node.name);
}

/** The element type of a node's output, from its attributes (float unless they say otherwise). */
function outputType(node: TfNode): OnnxElementType {
  if (["Less", "Greater", "LogicalNot"].includes(node.op)) return OnnxType.BOOL;
  if (["Where", "Shape"].includes(node.op)) return OnnxType.INT32;
  const attr = node.attr ?? {};
  const type = (attr.DstT ?? attr.T ?? attr.dtype)?.type;
  return (type === undefined ? undefined : TF_TYPES[String(type)]) ?? OnnxType.FLOAT;
}

function scalarTensor(type: OnnxElementType, value: number): OnnxTensor {
  const data =
    type === OnnxType.FLOAT
      ? new Uint8Array(new Float32Array([value]).buffer)
      : type === OnnxType.INT32
        ? new Uint8Array(new Int32Array([value]).buffer)
        : new Uint8Array([value ? 1 : 0]);
  return { name: "value", type, dims: [1], data };
}
