/**
 * The image half of the worker: the image references of a batch's objects, each fetched, decoded and
 * embedded once (by the embedding pool's threads, images/pipeline.ts), mapped back to their objects.
 * An image that cannot be had puts its object in ERROR with a reason a person understands
 * (`image "https://…/a.jpg": HTTP 404`); the rest of the batch goes on.
 */
import type { ImageOutcome, ImageRef } from "../images/pipeline.js";
import { displayReference } from "../images/reference.js";
import type { ImageValue } from "./extract.js";

export interface ObjectImages {
  id: string;
  /** The directory relative paths are resolved against. */
  base: string;
  images: readonly ImageValue[];
}

export interface EmbeddedImages {
  /** object id → one unit vector per image, in the object's image order */
  vectors: Map<string, Float32Array[]>;
  /** object id → why it cannot be indexed (the first image that failed) */
  errors: Map<string, string>;
}

/** Embeds the images of `objects` with `embed` (a vector or a reason per reference, in order); the same reference is embedded once. */
export async function embedObjectImages(objects: readonly ObjectImages[], embed: (refs: ImageRef[]) => Promise<ImageOutcome[]>): Promise<EmbeddedImages> {
  const keyOf = (value: string, base: string) => JSON.stringify([base, value]);
  const unique = new Map<string, ImageRef>();
  for (const object of objects) for (const image of object.images) unique.set(keyOf(image.value, object.base), { value: image.value, base: object.base });
  const refs = [...unique.values()];
  const outcomes = new Map<string, ImageOutcome>();
  (await embed(refs)).forEach((outcome, i) => outcomes.set(keyOf((refs[i] as ImageRef).value, (refs[i] as ImageRef).base), outcome));
  const vectors = new Map<string, Float32Array[]>();
  const errors = new Map<string, string>();
  for (const object of objects) {
    const out: Float32Array[] = [];
    for (const image of object.images) {
      const outcome = outcomes.get(keyOf(image.value, object.base)) ?? "not embedded";
      if (typeof outcome === "string") {
        errors.set(object.id, `image ${JSON.stringify(displayReference(image.value))}: ${outcome}`);
        break;
      }
      out.push(outcome);
    }
    if (!errors.has(object.id)) vectors.set(object.id, out);
  }
  return { vectors, errors };
}
