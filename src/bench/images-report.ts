/** The figures of `npm run bench:images` and their table. */
import type { DecodeFigures, FetchFigures, SearchFigures, VisionFigures } from "./images-measure.js";

export interface IngestFigures {
  label: string;
  /** SEMSEARCH_THREADS of the CLI and its worker */
  threads: number;
  /** objects (one image each, for image indexes) per second of the build */
  per_s: number;
  seconds: number;
  ready: number;
  /** the last VmHWM seen while the build ran */
  worker_peak_rss_mb: number;
  /** what the worker logs on exit (it also covers the optimize step after the build) */
  worker_logged_peak_rss_mb: number;
  search?: SearchFigures;
}

export interface Report {
  machine: { cores: number; node: string };
  images: number;
  photo_kb: number;
  coco_kb: number | undefined;
  fetch: FetchFigures;
  decode: DecodeFigures;
  vision: VisionFigures[];
  ingest: IngestFigures[];
  seconds: number;
}

const f = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? "–" : n.toFixed(digits));
const row = (cells: string[], widths: number[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join("  ");

function ingestLines(report: Report): string[] {
  if (report.ingest.length === 0) return ["(end to end skipped)"];
  const text = report.ingest.find((entry) => entry.label.startsWith("text"));
  const w = [16, 10, 8, 7, 12, 18, 18, 10];
  return [
    row(["end to end", "objects/s", "seconds", "READY", "worker RSS", "hybrid p50/p95 ms", "vector p50/p95 ms", "÷ text"], w),
    ...report.ingest.map((entry) =>
      row(
        [
          entry.label,
          f(entry.per_s),
          f(entry.seconds),
          String(entry.ready),
          `${entry.worker_peak_rss_mb} MB`,
          entry.search ? `${f(entry.search.hybrid_p50_ms)} / ${f(entry.search.hybrid_p95_ms)}` : "–",
          entry.search ? `${f(entry.search.vector_p50_ms)} / ${f(entry.search.vector_p95_ms)}` : "–",
          text ? f(entry.per_s / text.per_s, 3) : "–",
        ],
        w,
      ),
    ),
  ];
}

/** The report as a readable table. */
export function renderReport(report: Report): string {
  const { fetch, decode } = report;
  const v = [12, 7, 13, 9, 14, 15, 9];
  const lines = [
    `${report.images} photos, ${f(report.photo_kb, 0)} KB on average (640×427 JPEG q85); ${report.machine.cores} cores, Node ${report.machine.node}; ${f(report.seconds, 0)} s. Indicative figures: the cores are shared.`,
    "",
    "fetch (8 in flight)          images/s",
    `local paths                 ${f(fetch.local_per_s).padStart(9)}`,
    `HTTP, no cache              ${f(fetch.http_cold_per_s).padStart(9)}`,
    `HTTP, cache: first pass     ${f(fetch.http_cache_first_per_s).padStart(9)}`,
    `HTTP, cache: 304 pass       ${f(fetch.http_cache_revalidate_per_s).padStart(9)}   (${fetch.revalidated_from_cache} from the cache)`,
    "",
    `decode + preprocess 224 px (sharp threads ${decode.sharp_threads})  images/s 1 at a time  8 in flight`,
    `generated photos (${decode.images})`.padEnd(42) + `${f(decode.one_per_s).padStart(20)}  ${f(decode.in_flight_per_s).padStart(11)}   (${f(decode.one_per_cpu_s)}/CPU-s)`,
    ...(decode.coco ? [`COCO photos (${decode.coco.images}, ${f(report.coco_kb, 0)} KB avg)`.padEnd(42) + `${f(decode.coco.one_per_s).padStart(20)}  ${f(decode.coco.in_flight_per_s).padStart(11)}`] : []),
    "",
    row(["vision tower", "images", "load ms text", "+ vision", "images/s (×8)", "per CPU-second", "peak RSS", "text query p50/p95 ms"], [...v, 22]),
    ...report.vision.map((r) =>
      row(
        [r.label, String(r.images), String(r.load_ms), String(r.vision_load_ms), f(r.images_per_s), f(r.images_per_cpu_s), `${r.peak_rss_mb} MB`, r.query_p50_ms === undefined ? "–" : `${f(r.query_p50_ms, 2)} / ${f(r.query_p95_ms, 2)}`],
        [...v, 22],
      ),
    ),
    "",
    ...ingestLines(report),
  ];
  return lines.join("\n") + "\n";
}
