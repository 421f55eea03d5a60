/**
 * docs/walkthrough.md, run line by line as a new user would: each `sh` block's commands in order, in
 * one empty folder, with `semsearch` on the PATH (the package's bin). A command passes when it exits
 * 0, or the code its `# exits N` comment names; a here-document is one command with its lines.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docsShell, ROOT } from "../helpers/cli.js";

/** The commands of the page's `sh` blocks: a line each, a here-document with its body. */
export function walkthroughCommands(markdown: string): { command: string; exit: number }[] {
  const commands: { command: string; exit: number }[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = (block[1] as string).split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
      const here = /<<'(\w+)'/.exec(line);
      if (here) {
        const end = lines.indexOf(here[1] as string, i + 1);
        commands.push({ command: lines.slice(i, end + 1).join("\n"), exit: 0 });
        i = end;
        continue;
      }
      const exits = /#\s*exits (\d+)/.exec(line);
      commands.push({ command: line, exit: exits ? Number(exits[1]) : 0 });
    }
  }
  return commands;
}

describe("docs/walkthrough.md", () => {
  it("runs line by line in an empty folder, each command exiting as the page says", () => {
    const page = readFileSync(path.join(ROOT, "docs", "walkthrough.md"), "utf8");
    const commands = walkthroughCommands(page);
    expect(commands.length).toBeGreaterThan(15);
    const shell = docsShell("walkthrough");
    const outputs: string[] = [];
    for (const { command, exit } of commands) {
      const run = shell.run(command);
      outputs.push(`$ ${command.split("\n")[0]}\n${run.stdout}${run.stderr}`);
      expect(run.status, `${command}\n${run.stdout}\n${run.stderr}`).toBe(exit);
    }
    const all = outputs.join("\n");
    expect(all).toContain('did you mean --id-field sku?');
    expect(all).toContain("Added 5 objects.");
    // the pipe's ids: one per line, after the header
    const cut = outputs.find((output) => output.startsWith('$ semsearch search shop "shoes for running"')) as string;
    expect(cut.split("\n").slice(1, 4)).toEqual(["id", "TW-102", expect.stringMatching(/^TW-\d+$/)]);
    // a list filter: the two products tagged rain or winter
    const tagged = outputs.find((output) => output.startsWith('$ semsearch search shop "clothes"')) as string;
    expect(tagged.match(/TW-\d+/g)?.sort()).toEqual(["TW-100", "TW-103"]);
    const listed = outputs.find((output) => output.startsWith("$ semsearch objects list")) as string;
    expect(listed).toContain("TW-100");
    expect(listed).not.toContain("TW-101");
    expect(listed).not.toContain("TW-104");
  });
});
