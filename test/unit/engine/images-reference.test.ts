import { describe, expect, it } from "vitest";
import path from "node:path";
import { IMAGE_EXTENSIONS, displayReference, looksLikeImageReference, resolveImageReference, confinedBase, bucketImageBase } from "../../../src/engine/images/reference.js";

const BASE = "/data/project";
const HUGE = `photos/${"a".repeat(100_000)}.png`;

describe("looksLikeImageReference", () => {
  it.each([
    ["https://example.com/cat.jpg", true],
    ["http://example.com/render?id=4", true],
    ["HTTPS://EXAMPLE.COM/", true],
    ["https://user:secret@example.com/a.png", true],
    ["file:///home/me/a.png", true],
    ["file:///home/me/no-extension", true],
    ["/abs/photo.JPG", true],
    ["./rel/photo.jpeg", true],
    ["../up/photo.webp", true],
    ["photos/a.jpg", true],
    ["a.gif", true],
    ["scans/page.TIFF", true],
    ["scans/page.tif", true],
    ["x/y.avif", true],
    ["My Photos/cat 1.png", true],
    ["fotos/gâteau 🍰.png", true],
    ["C:\\photos\\a.png", true],
    ["I like cats.jpg and dogs", false],
    ["photos/a.jpg?size=large", false],
    ["photos/a.pdf", false],
    ["photos/a.jpg.txt", false],
    [".png", false],
    ["photos/.png", false],
    ["photos/", false],
    ["", false],
    [" photos/a.jpg", false],
    ["photos/a.jpg ", false],
    ["photos/a\n.jpg", false],
    ["photos/a.jpg\n", false],
    ["photos/a\u0000.jpg", false],
    ["photos/a\t.jpg", false],
    ["https://example.com/a b.png", false],
    ["https://example.com/a.png\nhttps://b", false],
    ["javascript:alert(1)//.png", false],
    ["data:image/png;base64,AAAA.png", false],
    ["ftp://example.com/a.png", false],
    ["http:example.com/a.png", false],
    ["constructor", false],
    ["__proto__", false],
    ["toString.png", true],
    [HUGE, false],
    [`photos/${"a".repeat(4000)}.png`, true],
  ])("%j → %s", (value, expected) => {
    expect(looksLikeImageReference(value)).toBe(expected);
  });

  it("accepts every listed extension in any case", () => {
    for (const extension of IMAGE_EXTENSIONS) {
      expect(looksLikeImageReference(`a.${extension}`)).toBe(true);
      expect(looksLikeImageReference(`a.${extension.toUpperCase()}`)).toBe(true);
    }
  });
});

describe("resolveImageReference", () => {
  it.each([
    ["https://example.com/cat.jpg", { kind: "http", url: "https://example.com/cat.jpg" }],
    ["HTTP://Example.COM/a b.png", { kind: "http", url: "http://example.com/a%20b.png" }],
    ["https://user:secret@example.com/a.png", { kind: "http", url: "https://user:secret@example.com/a.png" }],
    ["https://[::1]:8080/a.png", { kind: "http", url: "https://[::1]:8080/a.png" }],
    ["file:///home/me/a.png", { kind: "file", path: "/home/me/a.png" }],
    ["file://localhost/home/me/a.png", { kind: "file", path: "/home/me/a.png" }],
    ["file:///home/me/caf%C3%A9%20au%20lait.png", { kind: "file", path: "/home/me/café au lait.png" }],
    ["/abs/photo.jpg", { kind: "file", path: "/abs/photo.jpg" }],
    ["/abs/../other/photo.jpg", { kind: "file", path: "/other/photo.jpg" }],
    ["photos/a.jpg", { kind: "file", path: "/data/project/photos/a.jpg" }],
    ["./a.jpg", { kind: "file", path: "/data/project/a.jpg" }],
    ["../a.jpg", { kind: "file", path: "/data/a.jpg" }],
    ["~/a.png", { kind: "file", path: "/data/project/~/a.png" }],
    ["fotos/gâteau 🍰.png", { kind: "file", path: "/data/project/fotos/gâteau 🍰.png" }],
    ["constructor", { kind: "file", path: "/data/project/constructor" }],
    ["__proto__", { kind: "file", path: "/data/project/__proto__" }],
    ["https://", { error: "not a valid URL" }],
    ["http://exa mple.com/a.png", { error: "not a valid URL" }],
    ["https://[nope/a.png", { error: "not a valid URL" }],
    ["ftp://example.com/a.png", { error: 'unsupported URL scheme "ftp:"' }],
    ["javascript:alert(1)", { error: 'unsupported URL scheme "javascript:"' }],
    ["data:image/png;base64,AAAA", { error: 'unsupported URL scheme "data:"' }],
    ["file://remotehost/x.png", { error: 'file URL on another host "remotehost"' }],
    ["file:///home/me/a%2Fb.png", { error: "not a valid file URL" }],
    ["", { error: "empty reference" }],
    ["photos/a\u0000.png", { error: "contains a line break or control character" }],
    ["photos/a\n.png", { error: "contains a line break or control character" }],
    [" a.png", { error: "starts or ends with white space" }],
    [HUGE, { error: "longer than 4096 characters" }],
  ])("%j", (value, expected) => {
    expect(resolveImageReference(value, BASE)).toEqual(expected);
  });

  it("refuses a relative base folder (a bug of the caller)", () => {
    expect(() => resolveImageReference("a.png", "relative/dir")).toThrow(TypeError);
  });

  it("quotes a long unknown scheme cut short", () => {
    const result = resolveImageReference(`${"x".repeat(3000)}:foo`, BASE);
    expect(result).toEqual({ error: expect.stringMatching(/^unsupported URL scheme "x{199}…"$/) });
  });
});

describe("displayReference", () => {
  it.each([
    ["https://user:secret@example.com/a.png", "https://example.com/a.png"],
    ["https://user@example.com/a.png", "https://example.com/a.png"],
    ["https://us@er:se@cret@example.com/a.png?x=@", "https://example.com/a.png?x=@"],
    ["http://example.com/a.png?mail=a@b", "http://example.com/a.png?mail=a@b"],
    ["/photos/a.png", "/photos/a.png"],
    ["bad\u001b[31mred\nline.png", "bad\uFFFD[31mred\uFFFDline.png"],
  ])("%j → %j", (value, expected) => {
    expect(displayReference(value)).toBe(expected);
  });

  it("cuts long values to 200 characters, credentials removed first", () => {
    const shown = displayReference(`https://user:${"p".repeat(5000)}@example.com/${"a".repeat(100_000)}.png`);
    expect(shown).not.toContain("user");
    expect(shown).not.toContain("ppp");
    expect(shown.startsWith("https://example.com/aaa")).toBe(true);
    expect(Array.from(shown)).toHaveLength(200);
    expect(shown.endsWith("…")).toBe(true);
  });

  it("never splits a character made of two code units", () => {
    const shown = displayReference("🍰".repeat(300));
    expect(Array.from(shown)).toHaveLength(200);
    expect(shown).toBe(`${"🍰".repeat(199)}…`);
    expect(displayReference("🍰".repeat(200))).toBe("🍰".repeat(200));
  });
});

describe("confined bases (objects added over HTTP)", () => {
  const root = path.resolve("/srv/images");
  it.each([
    ["a.png", { kind: "file", path: path.join(root, "a.png"), root }],
    ["sub/b.jpg", { kind: "file", path: path.join(root, "sub", "b.jpg"), root }],
    [path.join(root, "c.png"), { kind: "file", path: path.join(root, "c.png"), root }],
    ["../etc/x.png", { error: "outside the folder the server reads images from (--image-root)" }],
    ["/etc/passwd.png", { error: "outside the folder the server reads images from (--image-root)" }],
    ["file:///etc/x.png", { error: "outside the folder the server reads images from (--image-root)" }],
    ["sub/../../x.png", { error: "outside the folder the server reads images from (--image-root)" }],
    ["https://example.com/a.png", { kind: "http", url: "https://example.com/a.png" }],
  ])("inside %s: %j", (value, expected) => {
    expect(resolveImageReference(value, confinedBase(root))).toEqual(expected);
  });

  it.each([["a.png"], ["/tmp/a.png"], ["file:///tmp/a.png"]])("with no root, refuses every local file: %s", (value) => {
    expect(resolveImageReference(value, confinedBase(null))).toEqual({ error: expect.stringMatching(/^local image files are not read for objects added over HTTP/) });
  });

  it("keeps URLs with no root", () => {
    expect(resolveImageReference("http://h/a.png", confinedBase(null))).toEqual({ kind: "http", url: "http://h/a.png" });
  });
});

describe("the base of a project in a bucket", () => {
  it("takes URLs, and refuses every local file, relative, absolute or file://, saying why", () => {
    const base = bucketImageBase();
    expect(resolveImageReference("https://example.com/a.png", base)).toEqual({ kind: "http", url: "https://example.com/a.png" });
    for (const local of ["a.png", "/srv/images/a.png", "file:///srv/a.png", "../up.jpg"]) {
      const resolved = resolveImageReference(local, base);
      expect(resolved, local).toEqual({ error: expect.stringContaining("not read in a project in a bucket") });
    }
    expect(resolveImageReference("ftp://example.com/a.png", base)).toEqual({ error: expect.stringContaining("unsupported URL scheme") });
  });
});
