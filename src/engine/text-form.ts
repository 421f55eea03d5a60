/**
 * The Unicode form an index holds text in. Pure.
 *
 * The same word can be written in two ways: `é` as one code point (NFC, what keyboards type) or as
 * `e` and a combining accent (NFD, what macOS file names hold and pastes). LanceDB's tokenizer cuts
 * a word at a combining accent (`Zu\u0308rich` is the words `zu` and `rich`), so text in one form was
 * not found by a query in the other. An index created now records `normalization: "NFC"` and puts
 * its searchable text, its highlight segments' text and its string filter values into NFC, and every
 * query and filter value searched in it likewise. Objects are stored as given (what `objects get`
 * returns is untouched), and highlight offsets are into the stored text, as segments are cut from
 * it before their text is normalized.
 *
 * An index created before records nothing: it holds text as it was given, and is searched as
 * before, the query as typed (normalizing its queries now would no longer find the decomposed text
 * it holds); a search of such an index with decomposed text says so (decomposedQueryWarning).
 */
import type { Warning } from "./errors.js";
import type { FilterNode, Literal } from "./search/filter-syntax.js";
import type { IndexRecord } from "./types.js";

/** The form new indexes hold text in. */
export const TEXT_NORMALIZATION = "NFC" as const;

/** What an index does to a text before indexing or searching it: NFC, or nothing for an index that predates normalization. */
export function textForm(index: Pick<IndexRecord, "normalization">): (text: string) => string {
  return index.normalization === TEXT_NORMALIZATION ? (text) => text.normalize(TEXT_NORMALIZATION) : (text) => text;
}

/** A parsed filter with every value in the form `form` gives (columns kept, so errors still point into the filter as typed). */
export function filterInForm(node: FilterNode, form: (text: string) => string): FilterNode {
  const literal = (value: Literal): Literal => ({ ...value, text: form(value.text) });
  switch (node.kind) {
    case "and":
    case "or":
      return { kind: node.kind, items: node.items.map((item) => filterInForm(item, form)) };
    case "not":
      return { kind: "not", item: filterInForm(node.item, form) };
    case "match":
    case "compare":
      return { ...node, value: literal(node.value) };
    case "range":
      return {
        ...node,
        lower: node.lower && { ...node.lower, value: literal(node.lower.value) },
        upper: node.upper && { ...node.upper, value: literal(node.upper.value) },
      };
    case "exists":
      return node;
  }
}

/** The values of a parsed filter (to look at their form). */
function filterValues(node: FilterNode): string[] {
  switch (node.kind) {
    case "and":
    case "or":
      return node.items.flatMap(filterValues);
    case "not":
      return filterValues(node.item);
    case "match":
    case "compare":
      return [node.value.text];
    case "range":
      return [node.lower?.value.text, node.upper?.value.text].filter((text): text is string => text !== undefined);
    case "exists":
      return [];
  }
}

/**
 * The warning for a search of an index that predates normalization with a query or filter value
 * holding decomposed text (not in NFC: an accent as a character of its own), or null: such an index
 * compares text in the form it was given, so the query finds only objects that hold the same form.
 */
export function decomposedQueryWarning(index: Pick<IndexRecord, "id" | "normalization">, query: string, filter: FilterNode | null): Warning | null {
  if (index.normalization !== undefined) return null;
  const decomposed = (text: string) => text !== text.normalize(TEXT_NORMALIZATION);
  const what = decomposed(query) ? "The query" : filter && filterValues(filter).some(decomposed) ? "The filter" : null;
  if (what === null) return null;
  return {
    code: "TEXT_NOT_NORMALIZED",
    message: `${what} holds decomposed accents (as pasted from macOS), and index ${index.id} was created before semsearch normalized Unicode text: it matches only objects that hold the same form. Create the index again (index delete, then index create) to match both forms.`,
  };
}
