/**
 * Misspelt queries for evaluating typo tolerance (`npm run eval -- --typos`). Pure and
 * deterministic: each query gets one edit (a letter deleted, inserted, replaced, or two swapped, never
 * the first) in one of its words of 5 letters or more, chosen by a generator seeded with the
 * query's position, so every run misspells alike. A query without such a word is left as it is.
 */

/** A small linear congruential generator: [0, 1) numbers from a seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** The query with one typo (see above); `seed` is the query's position. */
export function withTypo(query: string, seed: number): string {
  const random = seeded(seed + 1);
  const parts = query.split(/(\s+)/);
  const eligible = parts.flatMap((part, at) => (/^[A-Za-z]{5,}$/.test(part) ? [at] : []));
  if (eligible.length === 0) return query;
  const at = eligible[Math.floor(random() * eligible.length)] as number;
  const word = parts[at] as string;
  const p = 1 + Math.floor(random() * (word.length - 1)); // never the first letter
  const kind = Math.floor(random() * 4);
  const letter = LETTERS[Math.floor(random() * LETTERS.length)] as string;
  let typo: string;
  if (kind === 0) typo = word.slice(0, p) + word.slice(p + 1);
  else if (kind === 1) typo = word.slice(0, p) + letter + word.slice(p);
  else if (kind === 2) typo = word.slice(0, p) + (letter === word[p] ? LETTERS[(LETTERS.indexOf(letter) + 1) % 26] : letter) + word.slice(p + 1);
  else {
    const [i, j] = p < word.length - 1 ? [p, p + 1] : [p - 1, p];
    // (swapping two equal letters changes nothing: then one is deleted)
    typo = word[i] === word[j] ? word.slice(0, p) + word.slice(p + 1) : word.slice(0, i) + word[j] + word[i] + word.slice(j + 1);
  }
  parts[at] = typo;
  return parts.join("");
}
