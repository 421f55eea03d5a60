/** Capturing the ValidationError a call throws, failing the test when it throws nothing or something else. */
import { expect } from "vitest";
import { ValidationError } from "../../src/engine/errors.js";

export function validationError(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError, but nothing was thrown");
}
