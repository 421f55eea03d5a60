/**
 * Writes an ONNX model (the ModelProto of onnx.proto) as protobuf bytes, for graphs built in memory
 * (the bundled model's TensorFlow graph, converted at load time by tf-graph-onnx.ts). Only the
 * fields those graphs use are written. Pure: no I/O.
 */

/** ONNX tensor element types (TensorProto.DataType). */
export const OnnxType = { FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9 } as const;
export type OnnxElementType = (typeof OnnxType)[keyof typeof OnnxType];

export interface OnnxTensor {
  name: string;
  type: OnnxElementType;
  dims: readonly number[];
  /** Little-endian element bytes, as TensorProto.raw_data. */
  data: Uint8Array;
}

export type OnnxAttribute = number | readonly number[] | string | { float: number } | OnnxTensor;

export interface OnnxNode {
  op: string;
  inputs: readonly string[];
  outputs: readonly string[];
  attributes?: Readonly<Record<string, OnnxAttribute>>;
}

export interface OnnxValue {
  name: string;
  type: OnnxElementType;
  /** A number is a fixed size, a string a named dynamic one; none: the shape is not declared. */
  dims?: readonly (number | string)[];
}

export interface OnnxGraph {
  name: string;
  nodes: readonly OnnxNode[];
  initializers: readonly OnnxTensor[];
  inputs: readonly OnnxValue[];
  outputs: readonly OnnxValue[];
}

export interface OnnxModel {
  irVersion: number;
  opset: number;
  producer: string;
  graph: OnnxGraph;
}

const VARINT = 0;
const LENGTH = 2;
const FIXED32 = 5;

const encoder = new TextEncoder();

/** A protobuf message being written: fields in order, nested messages as finished byte strings. */
class Message {
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  private scratch: number[] = [];

  private flush(): void {
    if (this.scratch.length === 0) return;
    this.push(Uint8Array.from(this.scratch));
    this.scratch = [];
  }

  private push(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private varint(value: bigint): void {
    let rest = BigInt.asUintN(64, value);
    while (rest >= 0x80n) {
      this.scratch.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.scratch.push(Number(rest));
  }

  private tag(field: number, wire: number): void {
    this.varint(BigInt((field << 3) | wire));
  }

  int(field: number, value: number | bigint): this {
    this.tag(field, VARINT);
    this.varint(BigInt(value));
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, FIXED32);
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setFloat32(0, value, true);
    this.scratch.push(...bytes);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, LENGTH);
    this.varint(BigInt(value.length));
    this.flush();
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, encoder.encode(value));
  }

  /** A nested message: its parts are taken as they are, so large tensors are copied once, by finish(). */
  message(field: number, value: Message): this {
    value.flush();
    this.tag(field, LENGTH);
    this.varint(BigInt(value.size));
    this.flush();
    for (const part of value.parts) this.push(part);
    return this;
  }

  finish(): Uint8Array {
    this.flush();
    if (this.parts.length === 1) return this.parts[0] as Uint8Array;
    const out = new Uint8Array(this.size);
    let offset = 0;
    for (const part of this.parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }
}

function tensorMessage(tensor: OnnxTensor): Message {
  const message = new Message();
  for (const dim of tensor.dims) message.int(1, dim);
  message.int(2, tensor.type).string(8, tensor.name).bytes(9, tensor.data);
  return message;
}

const AttributeType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, INTS: 7 } as const;

function attributeMessage(name: string, value: OnnxAttribute): Message {
  const message = new Message().string(1, name);
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new TypeError(`attribute ${name}: ${value} is not an integer (use { float })`);
    return message.int(3, value).int(20, AttributeType.INT);
  }
  if (typeof value === "string") return message.string(4, value).int(20, AttributeType.STRING);
  if (Array.isArray(value)) {
    for (const item of value as readonly number[]) message.int(8, item);
    return message.int(20, AttributeType.INTS);
  }
  if ("float" in value) return message.float(2, value.float).int(20, AttributeType.FLOAT);
  return message.message(5, tensorMessage(value as OnnxTensor)).int(20, AttributeType.TENSOR);
}

function nodeMessage(node: OnnxNode, index: number): Message {
  const message = new Message();
  for (const input of node.inputs) message.string(1, input);
  for (const output of node.outputs) message.string(2, output);
  message.string(3, `${node.op}_${index}`).string(4, node.op);
  for (const [name, value] of Object.entries(node.attributes ?? {})) message.message(5, attributeMessage(name, value));
  return message;
}

function valueMessage(value: OnnxValue): Message {
  const tensorType = new Message().int(1, value.type);
  if (value.dims) {
    const shape = new Message();
    for (const dim of value.dims) shape.message(1, typeof dim === "number" ? new Message().int(1, dim) : new Message().string(2, dim));
    tensorType.message(2, shape);
  }
  return new Message().string(1, value.name).message(2, new Message().message(1, tensorType));
}

/** The model as the bytes of an .onnx file. */
export function encodeOnnxModel(model: OnnxModel): Uint8Array {
  const graph = new Message();
  model.graph.nodes.forEach((node, i) => graph.message(1, nodeMessage(node, i)));
  graph.string(2, model.graph.name);
  for (const tensor of model.graph.initializers) graph.message(5, tensorMessage(tensor));
  for (const input of model.graph.inputs) graph.message(11, valueMessage(input));
  for (const output of model.graph.outputs) graph.message(12, valueMessage(output));
  return new Message()
    .int(1, model.irVersion)
    .string(2, model.producer)
    .message(7, graph)
    .message(8, new Message().string(1, "").int(2, model.opset))
    .finish();
}
