import { describe, expect, it } from "vitest";
import { parseDateTime, readFieldValue, readLiteral, storedValue } from "../../../src/engine/field-types.js";

describe("readFieldValue", () => {
  it.each([
    ["string", "abc", "abc"],
    ["string", 12.5, "12.5"],
    ["string", true, "true"],
    ["int", 42, 42],
    ["int", "42", 42],
    ["int", "-7", -7],
    ["float", 3.5, 3.5],
    ["float", "3.5", 3.5],
    ["float", "1e3", 1000],
    ["float", 7, 7],
    ["bool", true, true],
    ["bool", "FALSE", false],
    ["datetime", "2024-03-14T09:00:00Z", Date.UTC(2024, 2, 14, 9)],
    ["datetime", "2024-03-14", Date.UTC(2024, 2, 14)],
    ["datetime", "2000-02-29", Date.UTC(2000, 1, 29)], // divisible by 400: a leap year
    ["datetime", "2024-02-29T12:00:00Z", Date.UTC(2024, 1, 29, 12)],
  ] as const)("reads %s from %j", (type, value, expected) => {
    expect(readFieldValue(type, value)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ["string", ["a"], "expected a string, got a list"],
    ["string", { a: 1 }, "got an object"],
    ["int", 4.5, "expected an int, got 4.5"],
    ["int", "4.5", "expected an int"],
    ["int", 2 ** 60, "expected an int"],
    ["float", "cheap", 'expected a float, got "cheap"'],
    ["float", "", "expected a float"],
    ["float", true, "expected a float, got true"],
    ["bool", 1, "expected a bool, got 1"],
    ["bool", "yes", "expected a bool"],
    ["datetime", "yesterday", "RFC 3339"],
    ["datetime", 1700000000000, "RFC 3339"],
    ["datetime", "2024-02-30", "RFC 3339"],
    ["datetime", "1900-02-29", "RFC 3339"], // divisible by 100, not by 400: not a leap year
    ["datetime", "2100-02-29T00:00:00Z", "RFC 3339"],
    ["datetime", "2023-02-29", "RFC 3339"],
  ] as const)("refuses %s from %j", (type, value, message) => {
    const reading = readFieldValue(type, value);
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.message).toContain(message);
  });
});

describe("parseDateTime", () => {
  it.each([
    ["2024-03-14T09:00:00Z", Date.UTC(2024, 2, 14, 9)],
    ["2024-03-14t09:00:00z", Date.UTC(2024, 2, 14, 9)],
    ["2024-03-14 09:00:00Z", Date.UTC(2024, 2, 14, 9)],
    ["2024-03-14T10:30:00+01:30", Date.UTC(2024, 2, 14, 9)],
    ["2024-03-14T04:00:00-05:00", Date.UTC(2024, 2, 14, 9)],
    ["2024-03-14T09:00:00.25Z", Date.UTC(2024, 2, 14, 9, 0, 0, 250)],
    ["2024-03-14T09:00:00.123456Z", Date.UTC(2024, 2, 14, 9, 0, 0, 123)],
    ["2016-12-31T23:59:60Z", Date.UTC(2016, 11, 31, 23, 59, 59, 999)],
    ["2024-02-29", Date.UTC(2024, 1, 29)],
    ["0099-01-01", -59042995200000],
  ])("%s", (text, expected) => {
    expect(parseDateTime(text)).toBe(expected);
  });

  it.each(["2024-03-14T09:00:00", "2023-02-29", "2024-13-01", "2024-03-14T24:00:00Z", "2024-03-14T09:00Z", "14/03/2024", "2024-03-14T09:00:00+25:00", ""])(
    "refuses %j",
    (text) => {
      expect(parseDateTime(text)).toBeNull();
    },
  );
});

describe("readLiteral and storedValue", () => {
  it("reads filter text as the field's type", () => {
    expect(readLiteral("int", "10")).toEqual({ ok: true, value: 10 });
    expect(readLiteral("bool", "true")).toEqual({ ok: true, value: true });
    expect(readLiteral("string", " spaced ")).toEqual({ ok: true, value: " spaced " });
    expect(readLiteral("int", "ten").ok).toBe(false);
  });

  it("stores booleans as 1 and 0", () => {
    expect([storedValue(true), storedValue(false), storedValue("x"), storedValue(2)]).toEqual([1, 0, "x", 2]);
  });
});
