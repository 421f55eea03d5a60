/**
 * The filter language (`--filter`, the service's `filter_query`): text → AST, and back. Pure.
 *
 *   filter     := or
 *   or         := and ("OR" and)*
 *   and        := unary ("AND" unary)*
 *   unary      := "NOT" unary | "(" or ")" | condition
 *   condition  := field ":" ( value | "*" | quoted
 *                 | (">" | ">=" | "<" | "<=") bound
 *                 | ("[" | "{") bound "TO" bound ("]" | "}") )
 *   field      := name ("." name)*        name: letters, digits, "_"
 *   quoted     := '"' (any character; \" and \\ escape) '"'
 *   bound      := quoted | bare | "*"     ("*" leaves that side open)
 *
 * Operators are upper case; NOT binds tighter than AND, AND tighter than OR. `[`/`]` include
 * their bound, `{`/`}` exclude it. Conditions must be joined by AND or OR.
 */
import { ValidationError } from "../errors.js";
import { MAX_FILTER_CONDITIONS } from "./limits.js";

export interface FieldRef {
  path: string;
  /** 1-based column of the field name */
  column: number;
}

export interface Literal {
  text: string;
  quoted: boolean;
  /** 1-based column where the value starts */
  column: number;
}

export interface Bound {
  value: Literal;
  inclusive: boolean;
}

export type Comparison = ">" | ">=" | "<" | "<=";

export type FilterCondition =
  | { kind: "match"; field: FieldRef; value: Literal }
  | { kind: "exists"; field: FieldRef }
  | { kind: "compare"; field: FieldRef; op: Comparison; value: Literal }
  | { kind: "range"; field: FieldRef; lower: Bound | null; upper: Bound | null };

export type FilterNode =
  | { kind: "and"; items: FilterNode[] }
  | { kind: "or"; items: FilterNode[] }
  | { kind: "not"; item: FilterNode }
  | FilterCondition;

/** Longest filter text accepted, in characters. */
export const MAX_FILTER_LENGTH = 100_000;
/**
 * Deepest nesting of parentheses and NOTs. LanceDB's SQL parser takes clauses nested about 23
 * levels deep, and a level of the filter can take two of them (an OR and the AND inside it): the
 * costliest filters within this and MAX_FILTER_CONDITIONS need 35 of the 40 that search/filters.ts allows
 * (on scalar fields: conditions on fields that hold lists cost more, and such filters may be refused there).
 */
export const MAX_FILTER_DEPTH = 10;

const FIELD = /[\p{L}\p{N}_]+(?:\.[\p{L}\p{N}_]+)*/uy;
/** Characters that end a bare value. */
const VALUE_END = /[\s()[\]{}"]/u;
const BOUND_END = /[\s()[\]{}"]/u;

/** A ValidationError pointing at a column of the filter. */
export function filterError(column: number, message: string, hint?: string): ValidationError {
  return new ValidationError("INVALID_FILTER", `Invalid filter at column ${column}: ${message}`, {
    issues: [{ path: "filter", message, column }],
    hint,
  });
}

class Parser {
  private pos = 0;
  /** Conditions parsed so far. */
  private conditions = 0;
  /** 1-based column of the first condition over MAX_FILTER_CONDITIONS. */
  private overLimit = 0;

  constructor(private readonly src: string) {}

  private fail(message: string, at = this.pos, hint?: string): never {
    throw filterError(at + 1, message, hint);
  }

  private skipSpace(): void {
    while (this.pos < this.src.length && /\s/u.test(this.src[this.pos] as string)) this.pos++;
  }

  private atEnd(): boolean {
    return this.pos >= this.src.length;
  }

  /** Whether an upper-case keyword starts here (followed by space, a parenthesis or the end). */
  private atKeyword(word: string): boolean {
    if (!this.src.startsWith(word, this.pos)) return false;
    const next = this.src[this.pos + word.length];
    return next === undefined || /[\s()]/u.test(next);
  }

  private found(): string {
    if (this.atEnd()) return "the end of the filter";
    const rest = this.src.slice(this.pos).split(/\s/u)[0] as string;
    return JSON.stringify(rest.length > 20 ? `${rest.slice(0, 20)}…` : rest);
  }

  parse(): FilterNode {
    const node = this.parseOr(0);
    this.skipSpace();
    if (!this.atEnd()) {
      if (this.src[this.pos] === ")") this.fail('unmatched ")"');
      this.fail(`expected AND, OR or the end of the filter, found ${this.found()}`, this.pos, "Join conditions with AND or OR (upper case).");
    }
    if (this.conditions > MAX_FILTER_CONDITIONS) {
      const count = this.conditions.toLocaleString("en-US");
      this.fail(`this filter has ${count} conditions; at most ${MAX_FILTER_CONDITIONS.toLocaleString("en-US")} are supported`, this.overLimit - 1, "Match a range (price:[10 TO 20]) rather than each value, or split the search.");
    }
    return node;
  }

  private parseOr(depth: number): FilterNode {
    return this.parseJoined("OR", () => this.parseAnd(depth));
  }

  private parseAnd(depth: number): FilterNode {
    return this.parseJoined("AND", () => this.parseUnary(depth));
  }

  /** Operands joined by one operator; a single operand is returned as it is. */
  private parseJoined(operator: "AND" | "OR", operand: () => FilterNode): FilterNode {
    const items = [operand()];
    for (this.skipSpace(); this.atKeyword(operator); this.skipSpace()) {
      this.pos += operator.length;
      items.push(operand());
    }
    return items.length === 1 ? (items[0] as FilterNode) : { kind: operator === "AND" ? "and" : "or", items };
  }

  private parseUnary(depth: number): FilterNode {
    this.skipSpace();
    if (depth > MAX_FILTER_DEPTH) this.fail(`nested deeper than ${MAX_FILTER_DEPTH} levels (parentheses and NOTs)`);
    if (this.atKeyword("NOT")) {
      this.pos += 3;
      return { kind: "not", item: this.parseUnary(depth + 1) };
    }
    if (this.src[this.pos] === "(") {
      const open = this.pos;
      this.pos++;
      const node = this.parseOr(depth + 1);
      this.skipSpace();
      if (this.src[this.pos] !== ")") {
        if (this.atEnd()) this.fail('"(" is never closed', open);
        this.fail(`expected ")", AND or OR, found ${this.found()}`, this.pos, "Join conditions with AND or OR (upper case).");
      }
      this.pos++;
      return node;
    }
    return this.parseCondition();
  }

  private parseCondition(): FilterCondition {
    const start = this.pos;
    if (++this.conditions === MAX_FILTER_CONDITIONS + 1) this.overLimit = start + 1;
    if (this.atEnd()) this.fail("expected a condition (field:value), found the end of the filter");
    if (this.atKeyword("AND") || this.atKeyword("OR")) this.fail(`expected a condition (field:value) before ${this.found()}`);
    FIELD.lastIndex = this.pos;
    const name = FIELD.exec(this.src);
    if (!name) {
      if (this.src[this.pos] === ")") this.fail('unexpected ")": expected a condition (field:value)');
      this.fail(`expected a field name, found ${this.found()}`, this.pos, "Field names are letters, digits and _, with dots for nested fields.");
    }
    this.pos += name[0].length;
    const field: FieldRef = { path: name[0], column: start + 1 };
    if (this.src[this.pos] !== ":") {
      const word = ["and", "or", "not"].includes(name[0].toLowerCase()) ? ` Operators are upper case: ${name[0].toUpperCase()}.` : "";
      this.fail(`expected ":" after field "${name[0]}", found ${this.found()}`, this.pos, `Conditions are written field:value.${word}`);
    }
    this.pos++;
    this.skipSpace();
    const c = this.src[this.pos];
    if (c === undefined) this.fail(`expected a value for "${field.path}", found the end of the filter`);
    if (c === "[" || c === "{") return this.parseRange(field);
    if (c === ">" || c === "<") {
      const op = (this.src[this.pos + 1] === "=" ? `${c}=` : c) as Comparison;
      this.pos += op.length;
      this.skipSpace();
      const value = this.parseBound(`a value after "${op}"`);
      if (value === null) this.fail(`"*" cannot follow "${op}"`, this.pos - 1, `Use ${field.path}:* to ask for any value.`);
      return { kind: "compare", field, op, value };
    }
    if (c === "(") this.fail("grouped values are not supported", this.pos, `Write ${field.path}:a OR ${field.path}:b.`);
    if (c === '"') return { kind: "match", field, value: this.parseQuoted() };
    const value = this.parseBare(VALUE_END);
    if (value.text === "") this.fail(`expected a value for "${field.path}", found ${this.found()}`);
    if (value.text === "*") return { kind: "exists", field };
    if (value.text.includes("*")) {
      this.fail("wildcards are not supported", value.column - 1 + value.text.indexOf("*"), 'Quote the value to match a literal "*".');
    }
    return { kind: "match", field, value };
  }

  private parseRange(field: FieldRef): FilterCondition {
    const open = this.pos;
    const lowerInclusive = this.src[this.pos] === "[";
    this.pos++;
    this.skipSpace();
    if (this.atKeyword("TO")) this.fail("expected a lower bound before TO", this.pos, "Use * for an open end: [* TO high].");
    const lower = this.parseBound("a lower bound");
    this.skipSpace();
    if (!this.atKeyword("TO")) this.fail(`expected TO in the range, found ${this.found()}`, this.pos, "Ranges are written [low TO high], {low TO high}, with * for an open end.");
    this.pos += 2;
    this.skipSpace();
    const upper = this.parseBound("an upper bound");
    this.skipSpace();
    const close = this.src[this.pos];
    if (close !== "]" && close !== "}") {
      if (this.atEnd()) this.fail("the range is never closed", open);
      this.fail(`expected "]" or "}" to close the range, found ${this.found()}`);
    }
    this.pos++;
    return {
      kind: "range",
      field,
      lower: lower === null ? null : { value: lower, inclusive: lowerInclusive },
      upper: upper === null ? null : { value: upper, inclusive: close === "]" },
    };
  }

  /** A bound: quoted, bare, or `*` (null: open). */
  private parseBound(what: string): Literal | null {
    if (this.src[this.pos] === '"') return this.parseQuoted();
    const value = this.parseBare(BOUND_END);
    if (value.text === "") this.fail(`expected ${what}, found ${this.found()}`);
    if (value.text === "*") return null;
    return value;
  }

  private parseBare(end: RegExp): Literal {
    const start = this.pos;
    while (this.pos < this.src.length && !end.test(this.src[this.pos] as string)) this.pos++;
    return { text: this.src.slice(start, this.pos), quoted: false, column: start + 1 };
  }

  private parseQuoted(): Literal {
    const start = this.pos;
    this.pos++;
    let text = "";
    while (this.pos < this.src.length) {
      const c = this.src[this.pos] as string;
      if (c === '"') {
        this.pos++;
        return { text, quoted: true, column: start + 1 };
      }
      if (c === "\\") {
        if (this.pos + 1 >= this.src.length) break;
        text += this.src[this.pos + 1];
        this.pos += 2;
        continue;
      }
      text += c;
      this.pos++;
    }
    this.fail("the quoted value is never closed", start, 'Close it with ", and write \\" for a quote inside it.');
  }
}

/** Parses a filter; null for an empty (or all-space) filter, which filters nothing out. */
export function parseFilter(text: string): FilterNode | null {
  if (text.length > MAX_FILTER_LENGTH) throw filterError(MAX_FILTER_LENGTH + 1, `longer than ${MAX_FILTER_LENGTH} characters`);
  if (text.trim() === "") return null;
  return new Parser(text).parse();
}

function formatLiteral(literal: Literal): string {
  return literal.quoted ? `"${literal.text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"` : literal.text;
}

/** Writes a filter back as text that parses to the same tree (positions aside). */
export function formatFilter(node: FilterNode): string {
  switch (node.kind) {
    case "and":
    case "or":
      return `(${node.items.map(formatFilter).join(node.kind === "and" ? " AND " : " OR ")})`;
    case "not":
      return `NOT ${formatFilter(node.item)}`;
    case "match":
      return `${node.field.path}:${formatLiteral(node.value)}`;
    case "exists":
      return `${node.field.path}:*`;
    case "compare":
      return `${node.field.path}:${node.op}${formatLiteral(node.value)}`;
    case "range": {
      const open = node.lower === null || node.lower.inclusive ? "[" : "{";
      const close = node.upper === null || node.upper.inclusive ? "]" : "}";
      const bound = (b: Bound | null) => (b === null ? "*" : formatLiteral(b.value));
      return `${node.field.path}:${open}${bound(node.lower)} TO ${bound(node.upper)}${close}`;
    }
  }
}

/** The fields a filter names, each once, in the order they appear. */
export function filterFieldPaths(node: FilterNode): string[] {
  const paths = new Set<string>();
  const walk = (item: FilterNode): void => {
    if (item.kind === "and" || item.kind === "or") item.items.forEach(walk);
    else if (item.kind === "not") walk(item.item);
    else paths.add(item.field.path);
  };
  walk(node);
  return [...paths];
}
