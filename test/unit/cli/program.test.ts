import type { Command } from "commander";
import { describe, expect, it, vi } from "vitest";
import { createProgram, handlers, type Handlers } from "../../../src/cli/program.js";

function mockHandlers() {
  const mocks = Object.fromEntries(Object.keys(handlers).map((name) => [name, vi.fn(async () => {})])) as unknown as {
    [K in keyof Handlers]: ReturnType<typeof vi.fn>;
  };
  return mocks;
}

async function parse(argv: string[]) {
  const mocks = mockHandlers();
  const program = createProgram(mocks as unknown as Handlers);
  const quiet = (command: Command): void => {
    command.configureOutput({ writeErr: () => {}, writeOut: () => {} });
    command.commands.forEach(quiet);
  };
  quiet(program);
  await program.parseAsync(argv, { from: "user" });
  return mocks;
}

describe("command line contract", () => {
  it("search passes index, query words and numeric options", async () => {
    const mocks = await parse(["--project", "/p", "search", "idx_a", "red", "shoes", "--limit", "20", "--page", "3", "--json"]);
    expect(mocks.search).toHaveBeenCalledWith("idx_a", ["red", "shoes"], expect.objectContaining({ project: "/p", limit: 20, page: 3, json: true }));
  });

  it("index create collects repeatable key=value flags and lists", async () => {
    const mocks = await parse([
      "index", "create", "--searchable", "title,body", "--field-type", "price=float", "--field-type", "year=int",
      "--segment-delimiter", "body=\\n\\n", "--neural-only", "--wait",
    ]);
    expect(mocks.indexCreate).toHaveBeenCalledWith(
      expect.objectContaining({
        searchable: ["title", "body"],
        fieldType: { price: "float", year: "int" },
        segmentDelimiter: { body: "\\n\\n" },
        neuralOnly: true,
        wait: true,
      }),
    );
  });

  it("objects add takes files and --id-field", async () => {
    const mocks = await parse(["objects", "add", "a.json", "b.jsonl", "--id-field", "sku"]);
    expect(mocks.objectsAdd).toHaveBeenCalledWith(["a.json", "b.jsonl"], expect.objectContaining({ idField: "sku" }));
  });

  it("search takes --filter, --jsonl, --all and --interactive / --no-interactive (unset by default)", async () => {
    const mocks = await parse(["search", "idx_a", "q", "--filter", "price:<10 AND NOT a:b", "--jsonl", "--all"]);
    const options = mocks.search.mock.calls[0]?.[2] as Record<string, unknown>;
    expect(options).toMatchObject({ filter: "price:<10 AND NOT a:b", jsonl: true, all: true });
    expect(options.interactive).toBeUndefined();
    expect((await parse(["search", "idx_a", "q", "--no-interactive"])).search.mock.calls[0]?.[2]).toMatchObject({ interactive: false });
    expect((await parse(["search", "idx_a", "q", "--interactive"])).search.mock.calls[0]?.[2]).toMatchObject({ interactive: true });
  });

  it("accepts the misspelled --results-fields", async () => {
    const mocks = await parse(["search", "idx_a", "q", "--results-fields", "highlights"]);
    expect(mocks.search).toHaveBeenCalledWith("idx_a", ["q"], expect.objectContaining({ resultsFields: "highlights" }));
  });

  it.each([
    [["search", "idx_a", "q", "--limit", "ten"]],
    [["index", "create", "--bogus"]],
    [["nope"]],
  ])("rejects %j as a usage error", async (argv) => {
    await expect(parse(argv)).rejects.toMatchObject({ name: "CommanderError" });
  });
});

describe("arguments holding U+FFFD or half a character (bytes a command line could not carry)", () => {
  const refused = async (argv: string[]) => {
    const mocks = mockHandlers();
    const program = createProgram(mocks as unknown as Handlers);
    const error = await program.parseAsync(argv, { from: "user" }).then(
      () => null,
      (caught: unknown) => caught as { code?: string; exitCode?: number; message?: string },
    );
    for (const [name, handler] of Object.entries(mocks)) expect(handler, name).not.toHaveBeenCalled();
    return error;
  };

  it.each([
    [["objects", "delete", "ok", "keep\uFFFD"], "objects delete <ids>"],
    [["objects", "delete", "--path", "notes/a\uFFFD.md"], "objects delete --path"],
    [["objects", "delete", "--filter", 'title:"caf\uFFFD"', "--yes"], "objects delete --filter"],
    [["objects", "delete", "--filter", "a:b", "--index", "d\uFFFDcs"], "objects delete --index"],
    [["objects", "get", "keep\uFFFD"], "objects get <id>"],
    [["objects", "add", "data\uFFFD.json"], "objects add <files>"],
    [["objects", "add", "data.json", "--id-field", "s\uFFFDu"], "objects add --id-field"],
    [["index", "get", "d\uFFFDcs"], "index get <id>"],
    [["index", "status", "d\uFFFDcs"], "index status <id>"],
    [["index", "delete", "d\uFFFDcs"], "index delete <id>"],
    [["index", "create", "--name", "d\uFFFDcs"], "index create --name"],
    [["index", "create", "--searchable", "title,b\uFFFDdy"], "index create --searchable"],
    [["index", "create", "--field-type", "pr\uFFFDce=float"], "index create --field-type"],
    [["search", "d\uFFFDcs", "shoes"], "search <index>"],
    [["search", "docs", "caf\uFFFD"], "search <query>"],
    [["search", "docs", "shoes", "--filter", 'topic:"caf\uFFFD"'], "search --filter"],
    [["search", "docs", "shoes", "--object-fields", "t\uFFFDtle"], "search --object-fields"],
    [["keys", "revoke", "c\uFFFD"], "keys revoke <id>"],
    [["keys", "create", "--name", "c\uFFFD"], "keys create --name"],
    [["models", "rm", "Xenova/m\uFFFD"], "models rm <id>"],
    [["project", "copy", "a\uFFFD", "b"], "project copy <from>"],
    [["--format", "json", "objects", "get", "a\ud800"], "objects get <id>"],
  ])("%j is refused with exit 4 before the command runs, naming %s", async (argv, what) => {
    expect(await refused(argv)).toMatchObject({ code: "ARGUMENT_NOT_UTF8", exitCode: 4, message: expect.stringMatching(new RegExp(`^${what.replace(/[<>]/g, "\\$&")} "`)) });
  });

  it("leaves --project to its own rule (exit 2, when the project is opened), and lets other text through", async () => {
    const mocks = await parse(["--project", "p\uFFFD", "objects", "delete", "keep", "caf\u00e9", "😀"]);
    expect(mocks.objectsDelete).toHaveBeenCalledWith(["keep", "caf\u00e9", "😀"], expect.objectContaining({ project: "p\uFFFD" }));
  });
});

describe("help", () => {
  const all = (command: Command): Command[] => [command, ...command.commands.flatMap(all)];
  const helpOf = (command: Command) => {
    let text = "";
    command.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
    command.outputHelp();
    return text;
  };

  it("every command's --help ends with examples and lists the global flags", () => {
    const commands = all(createProgram());
    expect(commands.length).toBeGreaterThan(12);
    for (const command of commands) {
      const help = helpOf(command);
      expect(help, command.name()).toMatch(/\nExamples:\n {2}semsearch /);
      if (command.parent) expect(help, command.name()).toMatch(/Global Options:[\s\S]*--project <dir>[\s\S]*--json/);
    }
  });

  it("says what index create prints, as it prints it", () => {
    const create = all(createProgram()).find((command) => command.name() === "create" && command.parent?.name() === "index") as Command;
    expect(helpOf(create).replace(/\s+/g, " ")).toContain('prints its id at once ({"id":"idx_…"} with --json)');
  });
});
