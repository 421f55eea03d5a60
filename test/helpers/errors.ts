/** Capturing the error a call throws, failing the test when it throws nothing or something of another class. */
import { expect } from "vitest";
import { UsageError, ValidationError } from "../../src/engine/errors.js";

/** The error of class `kind` that `fn` throws. */
export function thrown<T extends Error>(kind: new (...args: never[]) => T, fn: () => unknown): T {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(kind);
    return error as T;
  }
  throw new Error(`expected a ${kind.name}, but nothing was thrown`);
}

export function validationError(fn: () => unknown): ValidationError {
  return thrown(ValidationError, fn);
}

export function usageError(fn: () => unknown): UsageError {
  return thrown(UsageError, fn);
}
