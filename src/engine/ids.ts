/** Identifiers the engine assigns. */
import { randomBytes, randomUUID } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** `idx_` followed by 16 random lowercase letters and digits (spec §2.1 shape). */
export function newIndexId(): string {
  const bytes = randomBytes(16);
  let out = "idx_";
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

/** Id of an object added without one. */
export function newObjectId(): string {
  return randomUUID();
}
