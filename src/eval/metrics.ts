/** Ranking metrics over graded judgments. Pure. */

/** nDCG@k with linear gains (the BEIR / trec_eval convention). */
export function ndcgAt(ranked: readonly string[], judgments: ReadonlyMap<string, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => (dcg += (judgments.get(id) ?? 0) / Math.log2(i + 2)));
  const ideal = [...judgments.values()].sort((a, b) => b - a).slice(0, k);
  let idcg = 0;
  ideal.forEach((gain, i) => (idcg += gain / Math.log2(i + 2)));
  return idcg > 0 ? dcg / idcg : 0;
}

/** Fraction of the relevant documents found in the first k. */
export function recallAt(ranked: readonly string[], judgments: ReadonlyMap<string, number>, k: number): number {
  if (judgments.size === 0) return 0;
  return ranked.slice(0, k).filter((id) => (judgments.get(id) ?? 0) > 0).length / judgments.size;
}

/** Reciprocal rank of the first relevant document within k, else 0. */
export function mrrAt(ranked: readonly string[], judgments: ReadonlyMap<string, number>, k: number): number {
  const rank = ranked.slice(0, k).findIndex((id) => (judgments.get(id) ?? 0) > 0);
  return rank === -1 ? 0 : 1 / (rank + 1);
}

export interface Metrics {
  ndcg10: number;
  recall1: number;
  recall5: number;
  recall10: number;
  recall100: number;
  mrr10: number;
}

export function scoreQuery(ranked: readonly string[], judgments: ReadonlyMap<string, number>): Metrics {
  return {
    ndcg10: ndcgAt(ranked, judgments, 10),
    recall1: recallAt(ranked, judgments, 1),
    recall5: recallAt(ranked, judgments, 5),
    recall10: recallAt(ranked, judgments, 10),
    recall100: recallAt(ranked, judgments, 100),
    mrr10: mrrAt(ranked, judgments, 10),
  };
}

export function meanMetrics(all: readonly Metrics[]): Metrics {
  const n = all.length || 1;
  const sum = (key: keyof Metrics) => all.reduce((total, m) => total + m[key], 0) / n;
  return { ndcg10: sum("ndcg10"), recall1: sum("recall1"), recall5: sum("recall5"), recall10: sum("recall10"), recall100: sum("recall100"), mrr10: sum("mrr10") };
}
