/** The rule for text that may have lost its bytes (U+FFFD, lone surrogates), shared by every argument of the CLI and the project path. */
import { describe, expect, it } from "vitest";
import { refuseReplacedText, replacedCharacterAt, shownWithEscapes } from "../../../src/engine/replaced-text.js";
import { validationError } from "../../helpers/errors.js";

describe("replacedCharacterAt", () => {
  it.each([
    ["keep", -1],
    ["", -1],
    ["café 😀 \u0301", -1], // (a pair of surrogates is one character, not half of one)
    ["keep\uFFFD", 4],
    ["\uFFFDx", 0],
    ["a\ud800b", 1],
    ["ab\udc00", 2],
    ["😀\ud83d", 2],
    ["\ude00\ud83d", 0], // (halves in the wrong order are two lone halves)
  ])("%j: %d", (text, at) => {
    expect(replacedCharacterAt(text)).toBe(at);
  });
});

describe("refuseReplacedText", () => {
  it("lets text without U+FFFD or half characters through", () => {
    expect(refuseReplacedText("keep 😀", "objects delete <ids>", "hint")).toBeUndefined();
  });

  it("refuses U+FFFD with exit 4, naming the argument, the value (escaped, so it can be seen) and the character", () => {
    const error = validationError(() => refuseReplacedText("😀keep\uFFFD", "objects delete <ids>", "the hint"));
    expect([error.code, error.exitCode, error.status, error.hint]).toEqual(["ARGUMENT_NOT_UTF8", 4, 422, "the hint"]);
    expect(error.message).toBe('objects delete <ids> "😀keep\\ufffd" holds U+FFFD at character 6: bytes that are not UTF-8 become U+FFFD on a command line, so it may not be what was typed');
    expect(error.issues?.[0]?.path).toBe("objects delete <ids>");
  });

  it("refuses a lone surrogate, saying which", () => {
    expect(validationError(() => refuseReplacedText("a\ud800", "search <index>", "h")).message).toMatch(/^search <index> "a\\ud800" holds half of a character \(U\+D800 without its pair\) at character 2:/);
  });

  it("quotes at most 200 characters of a long value", () => {
    const message = validationError(() => refuseReplacedText(`${"q".repeat(100_000)}\uFFFD`, "search <query>", "h")).message;
    expect(message).toContain(`"${"q".repeat(200)}…"`);
    expect(message).toContain("at character 100001");
    expect(message.length).toBeLessThan(400);
  });
});

describe("shownWithEscapes", () => {
  it("is JSON with U+FFFD and halves of characters escaped", () => {
    expect(shownWithEscapes('a"\uFFFD\ud800\n')).toBe('"a\\"\\ufffd\\ud800\\n"');
  });
});
