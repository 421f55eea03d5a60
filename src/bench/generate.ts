/** Deterministic generated text objects for benchmarks (a seeded generator, no downloads). */

const SUBJECTS = ["the river", "a small market", "the old engine", "our garden", "a violin", "the glacier", "the harbour", "an orchard", "the tunnel", "a comet", "the library", "a bakery", "the council", "a research team", "the orchestra", "a fishing boat", "the railway", "a young doctor", "the museum", "a mountain village"];
const VERBS = ["flooded", "reopened", "stalled", "bloomed", "echoed", "melted", "filled", "ripened", "collapsed", "appeared", "expanded", "recovered", "changed", "moved", "vanished", "returned", "grew", "failed", "improved", "closed"];
const PLACES = ["near the old mill", "after the storm", "in the valley", "before dawn", "at the festival", "during the winter", "across the border", "under the bridge", "beside the lake", "on the northern coast"];
const DETAILS = ["prices rose sharply", "nobody was hurt", "the data were recorded", "visitors came from afar", "the results surprised experts", "repairs took a week", "a new study began", "the water level dropped", "the crowd cheered", "officials promised support", "the budget was cut", "samples were collected"];

/** Mulberry32: a tiny seeded PRNG, so every run generates the same corpus. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function sentence(random: () => number): string {
  const text = `${pick(random, SUBJECTS)} ${pick(random, VERBS)} ${pick(random, PLACES)}, and ${pick(random, DETAILS)}.`;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `count` objects `{id, title, body}`; bodies are 2–4 sentences (about 40 words). */
export function generateObjects(count: number, seed = 42): { id: string; title: string; body: string }[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const sentences = 2 + Math.floor(random() * 3);
    return {
      id: `doc-${i}`,
      title: sentence(random).replace(/\.$/, ""),
      body: Array.from({ length: sentences }, () => sentence(random)).join(" "),
    };
  });
}

/** Query texts in the same vocabulary. */
export function generateQueries(count: number, seed = 7): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => `${pick(random, SUBJECTS)} ${pick(random, VERBS)} ${pick(random, PLACES)}`);
}
