/**
 * The unigram (SentencePiece-style) tokenizer of the Universal Sentence Encoder lite
 * model: a Viterbi search for the highest-scoring split of the input into vocabulary
 * pieces. Pure.
 */

/** Vocabulary entries: `[piece, log-probability score]`; the index is the token id. */
export type Vocabulary = ReadonlyArray<readonly [string, number]>;

const WORD_START = "\u2581";
/** The first ids of the vocabulary are control symbols, never matched against text. */
const RESERVED_IDS = 6;
const UNKNOWN_ID = 0;

interface TrieNode {
  children: Map<string, TrieNode>;
  id: number;
  score: number;
}

function newNode(): TrieNode {
  return { children: new Map(), id: -1, score: 0 };
}

export class UnigramTokenizer {
  private readonly root: TrieNode = newNode();
  /**
   * Pieces by their first symbol, not yet in the trie: each branch of the trie is built when a text
   * first has its symbol, so a short query builds a few branches instead of all (a cold search).
   */
  private readonly unbuilt = new Map<string, number[]>();

  constructor(private readonly vocabulary: Vocabulary) {
    for (let id = RESERVED_IDS; id < vocabulary.length; id++) {
      const [piece] = vocabulary[id] as readonly [string, number];
      const first = String.fromCodePoint(piece.codePointAt(0) ?? 0);
      const ids = this.unbuilt.get(first);
      if (ids) ids.push(id);
      else this.unbuilt.set(first, [id]);
    }
  }

  /** The trie's branch for texts starting with `symbol`, built on first use. */
  private branch(symbol: string): TrieNode | undefined {
    const ids = this.unbuilt.get(symbol);
    if (ids) {
      this.unbuilt.delete(symbol);
      for (const id of ids) {
        const [piece, score] = this.vocabulary[id] as readonly [string, number];
        let node = this.root;
        for (const part of piece) {
          let child = node.children.get(part);
          if (!child) {
            child = newNode();
            node.children.set(part, child);
          }
          node = child;
        }
        node.id = id;
        node.score = score;
      }
    }
    return this.root.children.get(symbol);
  }

  /** Token ids of a text (NFKC-normalised, spaces marked as word starts). */
  encode(text: string): number[] {
    const normalised = text.normalize("NFKC");
    if (normalised.length === 0) return [];
    const symbols = [...(WORD_START + normalised.replace(/ /g, WORD_START))];
    const n = symbols.length;
    const best = new Float64Array(n + 1).fill(-Infinity);
    const tokenAt = new Int32Array(n + 1);
    const lengthAt = new Int32Array(n + 1);
    best[0] = 0;
    for (let start = 0; start < n; start++) {
      const base = best[start] as number;
      if (base === -Infinity) continue;
      let node: TrieNode | undefined = this.root;
      let matched = false;
      for (let end = start; end < n && node; end++) {
        node = end === start ? this.branch(symbols[end] as string) : node.children.get(symbols[end] as string);
        if (node && node.id >= 0) {
          matched = true;
          const score = base + node.score;
          if (score >= (best[end + 1] as number)) {
            best[end + 1] = score;
            tokenAt[end + 1] = node.id;
            lengthAt[end + 1] = end + 1 - start;
          }
        }
      }
      // A symbol no piece starts with becomes the unknown token (score 0, as in the original).
      if (!matched && base > (best[start + 1] as number)) {
        best[start + 1] = base;
        tokenAt[start + 1] = UNKNOWN_ID;
        lengthAt[start + 1] = 1;
      }
    }
    const ids: number[] = [];
    for (let end = n; end > 0; end -= lengthAt[end] as number) ids.push(tokenAt[end] as number);
    ids.reverse();
    // Consecutive unknown symbols collapse into one unknown token.
    return ids.filter((id, i) => !(id === UNKNOWN_ID && ids[i - 1] === UNKNOWN_ID));
  }
}
