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

/**
 * Characters encoded by whole-piece lookups before the trie is built: a process that embeds one
 * query (a cold search) never builds it (about 15 ms, most pieces starting with a word start);
 * one that embeds documents builds it at once, as the trie finds pieces about 7× as fast.
 */
const LOOKUPS_BEFORE_TRIE = 4096;

export class UnigramTokenizer {
  /** Pieces by text (ids; scores by id), and the longest piece in symbols. */
  private readonly pieces = new Map<string, number>();
  private readonly scores: Float64Array;
  private readonly longest: number;
  private root: TrieNode | null = null;
  private lookedUp = 0;

  constructor(vocabulary: Vocabulary) {
    this.scores = new Float64Array(vocabulary.length);
    let longest = 1;
    for (let id = RESERVED_IDS; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id] as readonly [string, number];
      this.pieces.set(piece, id);
      this.scores[id] = score;
      longest = Math.max(longest, [...piece].length);
    }
    this.longest = longest;
  }

  private trie(): TrieNode {
    if (this.root) return this.root;
    const root = newNode();
    for (const [piece, id] of this.pieces) {
      let node = root;
      for (const symbol of piece) {
        let child = node.children.get(symbol);
        if (!child) {
          child = newNode();
          node.children.set(symbol, child);
        }
        node = child;
      }
      node.id = id;
      node.score = this.scores[id] as number;
    }
    this.root = root;
    return root;
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
    /** A piece symbols[start..end] scored from `base`: kept when it is the best way to reach end + 1. */
    const consider = (start: number, end: number, id: number, base: number) => {
      const score = base + (this.scores[id] as number);
      if (score >= (best[end + 1] as number)) {
        best[end + 1] = score;
        tokenAt[end + 1] = id;
        lengthAt[end + 1] = end + 1 - start;
      }
    };
    const root = this.lookedUp < LOOKUPS_BEFORE_TRIE ? null : this.trie();
    this.lookedUp += n;
    for (let start = 0; start < n; start++) {
      const base = best[start] as number;
      if (base === -Infinity) continue;
      let matched = false;
      if (root) {
        let node: TrieNode | undefined = root;
        for (let end = start; end < n && node; end++) {
          node = node.children.get(symbols[end] as string);
          if (node && node.id >= 0) {
            matched = true;
            consider(start, end, node.id, base);
          }
        }
      } else {
        let piece = "";
        for (let end = start; end < Math.min(n, start + this.longest); end++) {
          piece += symbols[end] as string;
          const id = this.pieces.get(piece);
          if (id !== undefined) {
            matched = true;
            consider(start, end, id, base);
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
