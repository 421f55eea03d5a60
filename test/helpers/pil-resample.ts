/**
 * Pillow's resampling (`Image.resize`, libImaging/Resample.c) in plain TypeScript, as a test oracle:
 * a separable convolution with pixel centres aligned and the filter widened by the downscale
 * factor, so every input pixel counts. The Python CLIP processors resize this way; transformers.js
 * samples with sharp's `affine` instead, which skips pixels on a downscale and pads black on an upscale.
 * Pillow rounds to 8 bits between the passes; this keeps floats until the end.
 */

interface Filter {
  support: number;
  weight(x: number): number;
}

/** PIL filter numbers: 0 nearest, 2 bilinear, 3 bicubic (a = −0.5). */
const FILTERS: Record<number, Filter> = {
  0: { support: 0.5, weight: (x) => (x >= -0.5 && x < 0.5 ? 1 : 0) },
  2: { support: 1, weight: (x) => Math.max(0, 1 - Math.abs(x)) },
  3: {
    support: 2,
    weight: (t) => {
      const a = -0.5;
      const x = Math.abs(t);
      if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
      if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
      return 0;
    },
  },
};

/** For each output position: the first input index and the normalised weights from there. */
function coefficients(inSize: number, outSize: number, filter: Filter): { first: number; weights: number[] }[] {
  const scale = inSize / outSize;
  const widen = Math.max(scale, 1);
  const support = filter.support * widen;
  return Array.from({ length: outSize }, (_, out) => {
    const centre = (out + 0.5) * scale;
    const first = Math.max(Math.trunc(centre - support + 0.5), 0);
    const end = Math.min(Math.trunc(centre + support + 0.5), inSize);
    const weights: number[] = [];
    for (let i = first; i < end; i++) weights.push(filter.weight((i - centre + 0.5) / widen));
    const sum = weights.reduce((a, b) => a + b, 0);
    return { first, weights: weights.map((w) => (sum === 0 ? 0 : w / sum)) };
  });
}

/** Resizes interleaved 8-bit pixels (`channels` per pixel) to `outWidth` × `outHeight` with PIL filter `resample`. */
export function pilResize(data: ArrayLike<number>, width: number, height: number, channels: number, outWidth: number, outHeight: number, resample: number): Uint8ClampedArray {
  const filter = FILTERS[resample];
  if (!filter) throw new Error(`PIL filter ${resample} is not implemented here`);
  const across = coefficients(width, outWidth, filter);
  const down = coefficients(height, outHeight, filter);
  const rows = new Float64Array(outWidth * height * channels);
  for (let y = 0; y < height; y++) {
    across.forEach(({ first, weights }, x) => {
      for (let c = 0; c < channels; c++) {
        let sum = 0;
        weights.forEach((w, k) => (sum += w * (data[(y * width + first + k) * channels + c] as number)));
        rows[(y * outWidth + x) * channels + c] = sum;
      }
    });
  }
  const out = new Uint8ClampedArray(outWidth * outHeight * channels);
  down.forEach(({ first, weights }, y) => {
    for (let x = 0; x < outWidth; x++) {
      for (let c = 0; c < channels; c++) {
        let sum = 0;
        weights.forEach((w, k) => (sum += w * (rows[((first + k) * outWidth + x) * channels + c] as number)));
        out[(y * outWidth + x) * channels + c] = Math.round(sum);
      }
    }
  });
  return out;
}
