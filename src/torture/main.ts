/**
 * `npm run torture`: hostile inputs, kills at every step and at random moments, damaged state files,
 * hostile environments and concurrency, all through the real CLI on temporary projects. Counts
 * crashes (exit 1, a signal nobody sent, a hang) and lost or half-written objects (a project whose
 * invariants fail afterwards); exits 1 if there is any. `-- --seed N` changes the random kill points;
 * `-- --only models,state` runs some groups only (input, requests, crash-points, random-kills, state,
 * environment, concurrency, models, images).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startHub } from "./hub-server.js";
import { checkProject, cli, crashed, runs, storedIds, type Run } from "./cli.js";

const { values } = parseArgs({ options: { seed: { type: "string", default: "1" }, only: { type: "string" } } });
let seed = Number(values.seed) >>> 0;
/** Mulberry32: the same kill points for the same seed. */
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const root = mkdtempSync(path.join(tmpdir(), "semsearch-torture-"));
// Every command of the run (and the checks) downloads only from the run's own hub into its own folder.
process.env.SEMSEARCH_MODELS = path.join(root, "models");
process.env.SEMSEARCH_HF_ENDPOINT = "http://127.0.0.1:9";
let projects = 0;
const newProject = () => path.join(root, `p${++projects}`);

interface Finding {
  group: string;
  what: string;
}
const crashes: Finding[] = [];
const lost: Finding[] = [];
const groups = new Map<string, { cases: number; commands: number }>();
let group = "";

function begin(name: string): void {
  group = name;
  groups.set(name, { cases: 0, commands: runs.length });
  process.stderr.write(`\n${name}\n`);
}

/** Records one case: its runs must not crash (`allowed` exit codes, or a kill on purpose). */
function expectRun(what: string, run: Run, allowed: number[], killedOnPurpose = false): void {
  const entry = groups.get(group) as { cases: number };
  entry.cases++;
  const bad = crashed(run, killedOnPurpose) || (!killedOnPurpose && run.code !== null && !allowed.includes(run.code));
  process.stderr.write(bad ? "✗" : ".");
  if (bad) crashes.push({ group, what: `${what}: exit ${run.timedOut ? "timeout" : (run.code ?? run.signal)} (allowed ${allowed.join("/")}) ${run.stderr.trim().split("\n").slice(0, 3).join(" | ").slice(0, 400)}` });
}

async function expectConsistent(what: string, project: string, expectedIds?: (ids: string[]) => string | null): Promise<string[]> {
  const result = await checkProject(project);
  const problems = [...result.problems];
  const wrong = expectedIds?.(result.ids);
  if (wrong) problems.push(wrong);
  process.stderr.write(problems.length > 0 ? "L" : "·");
  for (const problem of problems) lost.push({ group, what: `${what}: ${problem}` });
  return result.ids;
}

const line = (id: unknown, extra: object = {}) => JSON.stringify({ id, title: `Title of ${String(id)}`, body: `Body text about rivers and hills for ${String(id)}.`, ...extra });
const lines = (prefix: string, n: number, extra: object = {}) => Array.from({ length: n }, (_, i) => line(`${prefix}${i}`, extra)).join("\n");
const same = (expected: string[]) => (ids: string[]) => (JSON.stringify(ids) === JSON.stringify([...expected].sort()) ? null : `stored ids differ from those acknowledged: ${ids.length} stored, ${expected.length} expected`);

async function project(base = 30): Promise<{ dir: string; ids: string[]; index: string }> {
  const dir = newProject();
  await cli(["--project", dir, "objects", "add", "-"], { input: lines("base", base) });
  const created = await cli(["--project", dir, "--json", "index", "create", "--searchable", "title,body", "--highlights", "--filterable", "n,title", "--field-type", "n=int"]);
  const index = (JSON.parse(created.stdout) as { id: string }).id;
  return { dir, ids: Array.from({ length: base }, (_, i) => `base${i}`), index };
}

async function hostileInput(): Promise<void> {
  begin("hostile input (objects add)");
  const { dir, ids, index } = await project();
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
  const deep = (n: number) => `{"id":"deep","x":${"[".repeat(n)}${"]".repeat(n)}}`;
  const cases: [string, string | Buffer, number[]][] = [
    ["invalid UTF-8 in a value", bytes('{"id":"u1","t":"', [0xff, 0xfe], '"}'), [4]],
    ["invalid UTF-8 in ids", bytes('{"id":"', [0xc3], '"}\n{"id":"', [0xc4], '"}'), [4]],
    ["lone surrogate ids", '{"id":"\\ud800"}\n{"id":"\\udc00"}', [4]],
    ["ids beyond 2^53", '{"id":12345678901234567890}\n{"id":12345678901234567891}', [4]],
    ["a fractional id", '{"id":1.5}', [4]],
    ["1e400", '{"id":"big","v":1e400}', [4]],
    ["nesting 101 deep", deep(100), [4]],
    ["nesting 100,000 deep", deep(100_000), [4]],
    ["a NUL in an id", '{"id":"a\\u0000b"}', [4]],
    ["an id of 3,000 characters", JSON.stringify({ id: "x".repeat(3000) }), [4]],
    ["an id that is an object", '{"id":{"a":1}}', [4]],
    ["not JSON", "{{{", [4]],
    ["an array of numbers", "[1,2,3]", [4]],
    ["a 5 MB value", JSON.stringify({ id: "huge", blob: "word ".repeat(1_000_000) }), [0]],
    ["a 100 KB searchable value", JSON.stringify({ id: "long", body: "Rivers run. ".repeat(8000) }), [0]],
    ["2,000 fields", JSON.stringify(Object.fromEntries([["id", "wide"], ...Array.from({ length: 2000 }, (_, i) => [`f${i}`, i])])), [0]],
    ["prototype names as fields and ids", ["__proto__", "constructor", "toString", "hasOwnProperty"].map((id) => JSON.stringify({ id, [id]: "x", constructor: 1, __proto__: { polluted: true } })).join("\n"), [0]],
    ["BOM, CRLF, blank lines", `\uFEFF${line("crlf1")}\r\n\r\n${line("crlf2")}\r\n`, [0]],
    ["a pretty-printed object", JSON.stringify({ id: "pretty", nested: { a: [1, 2, { b: "c" }] } }, null, 2), [0]],
    ["nesting 100 deep (allowed)", `{"id":"deep100","x":${"[".repeat(99)}${"]".repeat(99)}}`, [0]],
  ];
  for (const [what, input, allowed] of cases) {
    const run = await cli(["--project", dir, "--json", "objects", "add", "-"], { input });
    expectRun(what, run, allowed);
    if (run.code === 0) ids.push(...(JSON.parse(run.stdout) as { ids: string[] }).ids);
  }
  await expectConsistent("after hostile adds", dir, same(ids));
  const search = await cli(["--project", dir, "--json", "search", index, "rivers", "--object-fields", "constructor,__proto__,toString"]);
  expectRun("search returning prototype-named fields", search, [0]);
}

async function hostileRequests(): Promise<void> {
  begin("hostile configurations, filters and flags");
  const { dir, index } = await project(20);
  const configs: [string, string[], number[]][] = [
    ["catastrophic delimiter regex", ["--highlights", "--segment-delimiter", "body=(a+)+b"], [0]],
    ["lookbehind delimiter", ["--highlights", "--segment-delimiter", "body=(?<=x)y"], [4]],
    ["huge repetition", ["--highlights", "--segment-delimiter", "body=a{1000}{1000}"], [4]],
    ["prototype-named typed field", ["--field-type", "constructor=float", "--field-type", "__proto__=int"], [0]],
    ["prototype-named delimiter field", ["--highlights", "--searchable", "toString", "--segment-delimiter", "toString=;"], [0]],
    ["malformed paths", ["--searchable", "a..b"], [4]],
    ["a taken name", ["--name", "dup"], [0]],
    ["a taken name again", ["--name", "dup"], [5]],
    ["a name that looks like an id", ["--name", "idx_abc"], [4]],
    ["an unknown model", ["--model", "constructor"], [4]],
    ["type video", ["--type", "video"], [3]],
  ];
  for (const [what, args, allowed] of configs) expectRun(what, await cli(["--project", dir, "--json", "index", "create", ...args]), allowed);
  const ors = (n: number) => Array.from({ length: n }, (_, i) => `n:${i}`).join(" OR ");
  const filters: [string, string, number[]][] = [
    ["700 ORs", ors(700), [0, 4]],
    ["5,000 ORs", ors(5000), [0, 4]],
    ["10 parentheses", `${"(".repeat(10)}n:1${")".repeat(10)}`, [0]],
    ["11 parentheses", `${"(".repeat(11)}n:1${")".repeat(11)}`, [4]],
    ["24 nested NOTs", `${"NOT ".repeat(24)}n:1`, [4]],
    ["SQL in a value", `n:"1' OR '1'='1"`, [4]],
    ["quotes and backslashes", `title:"a\\"b\\\\c'd"`, [0]],
    ["unicode and RTL marks", `title:"\u202eevil\u200f😀"`, [0]],
    ["a prototype-named field", "constructor:>1", [0, 4]],
    ["an unknown field", "colour:red", [4]],
    ["100,001 characters", `title:"${"x".repeat(100_000)}"`, [4]],
  ];
  for (const [what, filter, allowed] of filters) expectRun(`filter: ${what}`, await cli(["--project", dir, "--json", "search", index, "rivers", "--filter", filter]), allowed);
  const flags: [string, string[], number[]][] = [
    ["limit 0", ["search", index, "q", "--limit", "0"], [4]],
    ["limit abc", ["search", index, "q", "--limit", "abc"], [2]],
    ["page 0", ["search", index, "q", "--page", "0"], [4]],
    ["a huge page", ["search", index, "q", "--page", "99999999999999999999"], [4]],
    ["offset -1", ["search", index, "q", "--offset", "-1"], [4]],
    ["objects list limit 0", ["objects", "list", "--limit", "0"], [4]],
    ["objects list limit 10001", ["objects", "list", "--limit", "10001"], [4]],
    ["an empty query", ["search", index, " "], [4]],
    ["timeout 0", ["index", "status", index, "--wait", "--timeout", "0"], [4]],
    ["an empty --project", ["--project", "", "index", "list"], [2]],
  ];
  for (const [what, args, allowed] of flags) expectRun(what, await cli(args[0] === "--project" ? ["--json", ...args] : ["--project", dir, "--json", ...args]), allowed);
  const piped = spawnSync("bash", ["-c", `"${process.execPath}" "${path.resolve("bin/semsearch")}" --project "${dir}" search ${index} rivers --all --jsonl --limit 1 | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"`], { encoding: "utf8" });
  expectRun("search --all --jsonl | head -1", { args: ["pipe"], code: Number(piped.stdout.trim()), signal: null, stdout: "", stderr: piped.stderr, timedOut: false }, [0]);
  await expectConsistent("after hostile requests", dir);
}

async function killsAtEveryStep(): Promise<void> {
  begin("kills at every step (crash points)");
  const { dir, ids } = await project();
  const points: [string, string[], string | undefined, (ids: string[]) => string[]][] = [
    ["add:journal", ["objects", "add", "-"], lines("k1-", 10), (x) => x],
    ["add:batch", ["objects", "add", "-"], lines("k2-", 10), (x) => x],
    ["add:written", ["objects", "add", "-"], lines("k3-", 10), (x) => x],
    ["delete:journal", ["objects", "delete", "base1"], undefined, (x) => x.filter((id) => id !== "base1")],
    ["delete:objects", ["objects", "delete", "base2"], undefined, (x) => x.filter((id) => id !== "base2")],
    ["delete:index-rows", ["objects", "delete", "base3"], undefined, (x) => x.filter((id) => id !== "base3")],
    ["index-create:tables", ["index", "create"], undefined, (x) => x],
  ];
  let expected = ids;
  for (const [point, args, input, after] of points) {
    const run = await cli(["--project", dir, ...args], { input, env: { SEMSEARCH_FAILPOINT: point } });
    expectRun(`killed at ${point}`, run, [], run.signal === "SIGKILL");
    expected = after(expected);
    await expectConsistent(`after a kill at ${point}`, dir, same(expected));
  }
  for (const point of ["worker:read", "worker:rows"]) {
    const added = await cli(["--project", dir, "--json", "objects", "add", "-"], { input: lines(`${point}-`, 8), env: { SEMSEARCH_FAILPOINT: point } });
    expectRun(`worker killed at ${point}`, added, [0]);
    expected = [...expected, ...Array.from({ length: 8 }, (_, i) => `${point}-${i}`)];
    await expectConsistent(`after the worker was killed at ${point}`, dir, same(expected));
  }
}

async function randomKills(rounds: number): Promise<void> {
  begin(`kills at random moments (${rounds} adds of 2,500 objects, ${rounds} deletes, ${rounds} workers)`);
  // Adds: all or nothing, whenever the kill lands (no index here: the add alone is under test).
  const plain = newProject();
  const big = path.join(root, "big.jsonl");
  writeFileSync(big, lines("r", 2500, { pad: "x".repeat(300) }));
  let landedBefore = false;
  for (let round = 0; round < rounds; round++) {
    const after = Math.floor(random() * 2500);
    const run = await cli(["--project", plain, "--json", "objects", "add", big], { killAfterMs: after });
    expectRun(`add killed after ${after} ms`, run, [0], run.signal === "SIGKILL");
    const stored = new Set(await storedIds(plain));
    const landed = Array.from({ length: 2500 }, (_, i) => `r${i}`).filter((id) => stored.has(id)).length;
    if (landed !== 0 && landed !== 2500) lost.push({ group, what: `an add killed after ${after} ms left ${landed} of its 2,500 objects` });
    if (landedBefore && landed !== 2500) lost.push({ group, what: `a killed re-add removed objects an earlier add had committed (${landed} of 2,500 left)` });
    if (run.code === 0 && landed !== 2500) lost.push({ group, what: `an acknowledged add left ${landed} of 2,500 objects` });
    landedBefore ||= landed === 2500;
    await expectConsistent(`add round ${round}`, plain);
  }
  // Deletes and the worker, on an indexed project.
  const { dir, ids } = await project(40);
  const expected = new Set(ids);
  for (let round = 0; round < rounds; round++) {
    const victim = [...expected][Math.floor(random() * expected.size)] as string;
    const after = Math.floor(random() * 400);
    const run = await cli(["--project", dir, "--json", "objects", "delete", victim], { killAfterMs: after });
    expectRun(`delete killed after ${after} ms`, run, [0], run.signal === "SIGKILL");
    const gone = !(await storedIds(dir)).includes(victim);
    if (run.code === 0 && !gone) lost.push({ group, what: `an acknowledged delete of ${victim} did not happen` });
    if (gone) expected.delete(victim);
    const added = await cli(["--project", dir, "--json", "objects", "add", "-"], { input: lines(`w${round}-`, 12) });
    expectRun("add before a worker kill", added, [0]);
    for (let i = 0; i < 12; i++) expected.add(`w${round}-${i}`);
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 3000)));
    const lock = (() => {
      try {
        return JSON.parse(readFileSync(path.join(dir, "worker.lock"), "utf8")) as { pid: number };
      } catch {
        return null;
      }
    })();
    if (lock) {
      try {
        process.kill(lock.pid, "SIGKILL");
      } catch {
        // it had finished
      }
    }
    (groups.get(group) as { cases: number }).cases++;
    await expectConsistent(`delete/worker round ${round}`, dir, same([...expected]));
  }
}

async function damagedState(): Promise<void> {
  begin("damaged and planted state files");
  const files: [string, string, number[]][] = [
    ["catalog.json", "{", [6]],
    ["catalog.json", '{"version":1,"indexes":[{"id":"idx_x","configuration":{},"model":"m","dimension":1,"created_at":"t"}]}', [6]],
    ["seq", "garbage", [0]],
    ["seq", "", [0]],
    ["progress", "{\"indexedSeq\":", [0]],
    ["add.journal", "{\"pid\":", [6]],
    ["delete.journal", '{"pid":99999999,"ids":["base4"]}', [0]],
    ["delete.journal", "not json", [0]],
    ["write.lock", "", [0]],
    ["worker.lock", '{"pid":1}', [0]],
    ["worker.json", "[]", [0]],
  ];
  for (const [file, content, allowed] of files) {
    const { dir, index } = await project(10);
    await cli(["--project", dir, "index", "status", index, "--wait"]);
    const target = file === "progress" ? path.join(dir, "progress", `${index}.json`) : path.join(dir, file);
    const backup = (() => {
      try {
        return readFileSync(target);
      } catch {
        return null;
      }
    })();
    writeFileSync(target, content);
    if (file.endsWith(".lock") || file.endsWith(".journal")) spawnSync("touch", ["-d", "1 hour ago", target]);
    for (const args of [["index", "list"], ["objects", "add", "-"], ["search", index, "rivers"], ["index", "status", index, "--wait", "--timeout", "120"]]) {
      expectRun(`${file} = ${JSON.stringify(content).slice(0, 40)}: ${args[0]} ${args[1]}`, await cli(["--project", dir, "--json", ...args], { input: line(`after-${args[0]}`) }), [...allowed, 0]);
    }
    if (file === "catalog.json" && backup) writeFileSync(target, backup);
    if (file === "add.journal") rmSync(target); // what the exit-6 message tells a person to do
    await expectConsistent(`after a damaged ${file}`, dir);
  }
  const planted = await project(5);
  const outside = path.join(root, "outside.txt");
  writeFileSync(outside, "untouched");
  rmSync(path.join(planted.dir, "worker.log"), { force: true });
  symlinkSync(outside, path.join(planted.dir, "worker.log"));
  expectRun("worker.log planted as a symlink", await cli(["--project", planted.dir, "objects", "add", "-", "--wait"], { input: line("sym") }), [0]);
  if (readFileSync(outside, "utf8") !== "untouched") lost.push({ group, what: "the worker wrote through a symlink planted at worker.log" });
  const file = path.join(root, "a-file");
  writeFileSync(file, "x");
  expectRun("a project path that is a file", await cli(["--project", file, "objects", "add", "-"], { input: line("f") }), [6]);
}

async function hostileEnvironment(): Promise<void> {
  begin("full disk and read-only file system (root only)");
  const mount = path.join(root, "mnt");
  mkdirSync(mount);
  if (spawnSync("mount", ["-t", "tmpfs", "-o", "size=150m", "tmpfs", mount]).status !== 0) {
    process.stderr.write("(skipped: cannot mount here)");
    return;
  }
  try {
    const dir = path.join(mount, "p");
    await cli(["--project", dir, "objects", "add", "-"], { input: lines("d", 30) });
    const created = await cli(["--project", dir, "--json", "index", "create", "--wait"]);
    const index = (JSON.parse(created.stdout) as { id: string }).id;
    spawnSync("dd", ["if=/dev/zero", `of=${path.join(mount, "filler")}`, "bs=1M", "count=1000"]);
    const full: [string[], number[]][] = [
      [["objects", "add", "-"], [6]],
      [["objects", "delete", "d1"], [6]],
      [["index", "create"], [6]],
      [["search", index, "rivers"], [0]],
      [["objects", "list"], [0]],
    ];
    for (const [args, allowed] of full) {
      expectRun(`disk full: ${args.slice(0, 2).join(" ")}`, await cli(["--project", dir, "--json", ...args], { input: lines("full", 500, { pad: "y".repeat(2000) }) }), allowed);
    }
    rmSync(path.join(mount, "filler"));
    expectRun("disk freed: objects add", await cli(["--project", dir, "objects", "add", "-"], { input: line("after-full") }), [0]);
    const ids = await expectConsistent("after the disk was full", dir);
    for (let i = 0; i < 100 && JSON.parse((await cli(["--project", dir, "--json", "worker", "status"])).stdout).running; i++) await new Promise((r) => setTimeout(r, 100));
    spawnSync("mount", ["-o", "remount,ro", mount]);
    const readOnly: [string[], number][] = [
      [["objects", "add", "-"], 6],
      [["objects", "delete", "d2"], 6],
      [["index", "create"], 6],
      [["search", index, "rivers"], 0],
      [["objects", "list"], 0],
      [["index", "list"], 0],
    ];
    for (const [args, allowed] of readOnly) expectRun(`read-only: ${args.slice(0, 2).join(" ")}`, await cli(["--project", dir, "--json", ...args], { input: line("ro") }), [allowed]);
    spawnSync("mount", ["-o", "remount,rw", mount]);
    await expectConsistent("after the file system was read-only", dir, same(ids));
  } finally {
    spawnSync("umount", ["-l", mount]);
  }
}

const FIXTURE_MODELS = fileURLToPath(new URL("../../fixtures/models/", import.meta.url));

/** A copy of a tiny fixture model with one file replaced (or removed, for null). */
function brokenModel(name: string, file: string, content: string | null): string {
  const dir = path.join(root, `model-${++projects}`);
  cpSync(path.join(FIXTURE_MODELS, "tiny-mean"), dir, { recursive: true });
  if (content === null) rmSync(path.join(dir, file), { force: true, recursive: true });
  else writeFileSync(path.join(dir, file), content);
  return dir;
}

async function models(rounds: number): Promise<void> {
  begin("models: hostile names and folders, kills during downloads, models gone");
  const hub = await startHub({ "tiny/mean": path.join(FIXTURE_MODELS, "tiny-mean"), "tiny/cls": path.join(FIXTURE_MODELS, "tiny-cls") });
  const modelsDir = process.env.SEMSEARCH_MODELS as string;
  const env = { SEMSEARCH_DOWNLOAD_TIMEOUT: "5000" };
  process.env.SEMSEARCH_HF_ENDPOINT = hub.url;
  try {
    const { dir, ids } = await project(10);
    const names: [string, number[]][] = [
      ["", [2, 4]],
      ["a/..", [4]],
      ["../../etc", [4]],
      ["a/b?x=1", [4]],
      ["%2e%2e/x", [4]],
      ["x".repeat(100_000), [2, 4]],
      ["a/b\u202e", [4]],
      ["/dev/null", [4]],
      ["/etc/passwd", [4]],
      ["tiny/nothing", [3]],
      ["Tiny/Mean", [0, 3]],
    ];
    for (const [name, allowed] of names) {
      expectRun(`--model ${JSON.stringify(name.slice(0, 40))}`, await cli(["--project", dir, "--json", "index", "create", "--model", name], { env }), allowed);
    }
    const folders: [string, string, string | null][] = [
      ["garbage config.json", "config.json", "{"],
      ["config.json an array", "config.json", "[]"],
      ["hidden_size 0", "config.json", JSON.stringify({ model_type: "bert", hidden_size: 0 })],
      ["hidden_size a string", "config.json", JSON.stringify({ model_type: "bert", hidden_size: "32" })],
      ["model_max_length 1", "tokenizer_config.json", JSON.stringify({ tokenizer_class: "BertTokenizer", model_max_length: 1 })],
      ["model_max_length 3", "tokenizer_config.json", JSON.stringify({ tokenizer_class: "BertTokenizer", model_max_length: 3 })],
      ["model_max_length 1e30", "tokenizer_config.json", JSON.stringify({ tokenizer_class: "BertTokenizer", model_max_length: 1e30 })],
      ["no tokenizer_config.json", "tokenizer_config.json", null],
      ["garbage tokenizer.json", "tokenizer.json", "not json"],
      ["empty weights", "onnx/model_quantized.onnx", ""],
      ["garbage weights", "onnx/model_quantized.onnx", "x".repeat(5000)],
      ["weights a directory", "onnx", null],
      ["garbage 1_Pooling", "1_Pooling/config.json", "{"],
    ];
    for (const [what, file, content] of folders) {
      expectRun(`a model folder with ${what}`, await cli(["--project", dir, "--json", "index", "create", "--model", brokenModel("tiny-mean", file, content)], { env }), [0, 4, 6]);
    }
    await expectConsistent("after hostile model names and folders", dir, same(ids));

    // Kills at random moments of a slow download, by `models pull` and by `index create`: the next try must finish it.
    hub.faults.throttle = 2048;
    for (let round = 0; round < rounds; round++) {
      rmSync(modelsDir, { recursive: true, force: true });
      const killAfterMs = 200 + Math.floor(random() * 600);
      const creating = round % 2 === 1;
      const args = creating ? ["--project", dir, "--json", "index", "create", "--model", "tiny/mean", "--name", `killed${round}`] : ["--json", "models", "pull", "tiny/mean"];
      const killed = await cli(args, { env, killAfterMs });
      expectRun(`${creating ? "index create" : "models pull"} killed after ${killAfterMs} ms`, killed, [0], killed.signal === "SIGKILL");
      const again = await cli(args, { env });
      // A create killed after it committed leaves its index: the second one then finds the name taken.
      expectRun(`${creating ? "index create" : "models pull"} again after a kill`, again, creating ? [0, 5] : [0]);
      if (creating) {
        const named = (JSON.parse((await cli(["--project", dir, "--json", "index", "list"], { env })).stdout) as { indexes: { name?: string }[] }).indexes.filter((index) => index.name === `killed${round}`);
        if (named.length !== 1) lost.push({ group, what: `after an index create killed during its download and run again, ${named.length} indexes are named killed${round}` });
      }
      const weights = path.join(modelsDir, "hub", "tiny", "mean", "0123456789abcdef0123456789abcdef01234567", "onnx", "model_quantized.onnx");
      if (!existsSync(weights) || !readFileSync(weights).equals(readFileSync(path.join(FIXTURE_MODELS, "tiny-mean", "onnx", "model_quantized.onnx")))) {
        lost.push({ group, what: `after a download killed at ${killAfterMs} ms and run again, the weights are missing or differ` });
      }
      await expectConsistent(`after ${creating ? "an index create" : "a pull"} killed during its download`, dir, same(ids));
    }
    delete hub.faults.throttle;

    // The model of built indexes goes away or changes: searches and waits fail clearly; nothing is lost; back, all is well.
    const listed = JSON.parse((await cli(["--project", dir, "--json", "index", "list"], { env })).stdout) as { indexes: { id: string; embedding?: { source: string } }[] };
    const hubIndex = listed.indexes.find((index) => index.embedding?.source === "hub");
    if (hubIndex) {
      const revision = path.join(modelsDir, "hub", "tiny", "mean", "0123456789abcdef0123456789abcdef01234567");
      const aside = path.join(root, "model-aside"); // out of the models folder: a copy in it would be found
      renameSync(revision, aside);
      expectRun("search with the model gone", await cli(["--project", dir, "--json", "search", hubIndex.id, "automobile"], { env }), [6]);
      expectRun("add --wait with the model gone", await cli(["--project", dir, "--json", "objects", "add", "-", "--wait", "--timeout", "60"], { env, input: lines("gone", 5) }), [6]);
      renameSync(aside, revision);
      expectRun("search with the model back", await cli(["--project", dir, "--json", "search", hubIndex.id, "automobile"], { env }), [0]);
      await expectConsistent("after the model went away and came back", dir, same([...ids, ...Array.from({ length: 5 }, (_, i) => `gone${i}`)]));
    }
  } finally {
    process.env.SEMSEARCH_HF_ENDPOINT = "http://127.0.0.1:9";
    await hub.close();
  }
}

/** A local server of hostile image answers. */
async function imageServer(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import("node:http");
  const red = readFileSync(path.join(FIXTURE_IMAGES, "red.png"));
  const server = createServer((req, res) => {
    switch (req.url) {
      case "/red.png":
        res.writeHead(200, { "content-type": "image/png", etag: '"r"' }).end(red);
        return;
      case "/drip.png": {
        res.writeHead(200, { "content-type": "image/png" });
        const timer = setInterval(() => res.write(Buffer.alloc(1)), 200);
        res.on("close", () => clearInterval(timer));
        return;
      }
      case "/endless.png": {
        res.writeHead(200, { "content-type": "image/png" });
        const chunk = Buffer.alloc(64 * 1024, 1);
        const pump = () => {
          while (res.write(chunk));
        };
        res.on("drain", pump);
        pump();
        return;
      }
      case "/lying.png":
        res.writeHead(200, { "content-type": "image/png", "content-length": "10" }).end(red.subarray(0, 10));
        return;
      case "/reset.png":
        res.writeHead(200, { "content-type": "image/png", "content-length": String(red.length) });
        res.write(red.subarray(0, 20));
        setTimeout(() => req.socket.destroy(), 50);
        return;
      case "/retry-after.png":
        res.writeHead(429, { "retry-after": "100000" }).end();
        return;
      case "/gzip.png":
        res.writeHead(200, { "content-type": "image/png", "content-encoding": "gzip" }).end(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]));
        return;
      case "/to-file.png":
        res.writeHead(302, { location: "file:///etc/passwd" }).end();
        return;
      case "/silent.png":
        return; // never answers
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A PNG whose header says `width` × `height`, with no pixel data. */
function pngBomb(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = (crcTable[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IEND", Buffer.alloc(0))]);
}

const FIXTURE_IMAGES = fileURLToPath(new URL("../../fixtures/images/", import.meta.url));

async function images(rounds: number): Promise<void> {
  begin("images: hostile references, files and servers, kills while images are indexed");
  const server = await imageServer();
  const dir = newProject();
  const pics = path.join(root, "pics");
  cpSync(FIXTURE_IMAGES, pics, { recursive: true });
  writeFileSync(path.join(pics, "text.jpg"), "not a picture");
  writeFileSync(path.join(pics, "empty.png"), "");
  writeFileSync(path.join(pics, "bomb.png"), pngBomb(60_000, 60_000));
  writeFileSync(path.join(pics, "half.jpg"), readFileSync(path.join(pics, "red.jpg")).subarray(0, 200));
  mkdirSync(path.join(pics, "dir.png"), { recursive: true });
  symlinkSync("/dev/zero", path.join(pics, "zero.png"));
  symlinkSync(path.join(pics, "loop.png"), path.join(pics, "loop.png").replace("loop", "loop2"));
  symlinkSync(path.join(pics, "loop2.png"), path.join(pics, "loop.png"));
  spawnSync("mkfifo", [path.join(pics, "fifo.png")]);
  const env = { SEMSEARCH_IMAGE_TIMEOUT: "2", SEMSEARCH_IMAGE_MAX_BYTES: "2000000", SEMSEARCH_IMAGE_RETRY_DELAY_MS: "20" };
  try {
    const references = [
      "red.png", "text.jpg", "empty.png", "bomb.png", "half.jpg", "dir.png", "zero.png", "loop.png", "fifo.png", "nowhere.png",
      `${server.url}/red.png`, `${server.url}/drip.png`, `${server.url}/endless.png`, `${server.url}/lying.png`, `${server.url}/reset.png`,
      `${server.url}/retry-after.png`, `${server.url}/gzip.png`, `${server.url}/to-file.png`, `${server.url}/silent.png`, `${server.url}/missing.png`,
      "file://otherhost/x.png", "x".repeat(5000) + ".png", "pics/\u0000.png", "%2e%2e/%2e%2e/etc/passwd.png",
    ];
    const objects = references.map((photo, i) => JSON.stringify({ id: `img${i}`, caption: `picture ${i}`, photo, constructor: "c.png", __proto__: "p.png" })).join("\n");
    writeFileSync(path.join(pics, "objects.jsonl"), objects);
    const added = await cli(["--project", dir, "--json", "objects", "add", path.join(pics, "objects.jsonl")], { env });
    expectRun("objects with hostile image references", added, [0]);
    const created = await cli(["--project", dir, "--json", "index", "create", "--type", "image", "--model", path.join(FIXTURE_MODELS, "tiny-clip"), "--highlights", "--image-fields", "photo", "--wait", "--timeout", "240"], { env, timeoutMs: 300_000 });
    expectRun("an image index over them (--wait)", created, [7]);
    const ids = references.map((_, i) => `img${i}`);
    await expectConsistent("after hostile images", dir, same(ids));
    const index = created.code === 7 ? (JSON.parse(created.stdout.split("\n")[0] as string) as { id: string }).id : null;
    if (index) {
      expectRun("search with image highlights", await cli(["--project", dir, "--json", "search", index, "red", "--result-fields", "highlights", "--limit", "100"], { env }), [0]);
      // The worker killed at random moments while it indexes images: resumed by the next command, nothing lost or twice.
      for (let round = 0; round < rounds; round++) {
        const batch = Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `k${round}-${i}`, photos: [path.join(pics, ["red.png", "blue.jpg", "green.webp", "yellow.gif"][i % 4] as string), path.join(pics, "white.png")] })).join("\n");
        expectRun("add before a worker kill", await cli(["--project", dir, "--json", "objects", "add", "-"], { env, input: batch }), [0]);
        for (let i = 0; i < 40; i++) ids.push(`k${round}-${i}`);
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 2000)));
        try {
          const lock = JSON.parse(readFileSync(path.join(dir, "worker.lock"), "utf8")) as { pid: number };
          process.kill(lock.pid, "SIGKILL");
        } catch {
          // no worker, or it had finished
        }
        (groups.get(group) as { cases: number }).cases++;
        await expectConsistent(`image worker round ${round}`, dir, same(ids));
      }
      expectRun("delete an object with images", await cli(["--project", dir, "--json", "objects", "delete", "k0-0"], { env }), [0]);
      ids.splice(ids.indexOf("k0-0"), 1);
      await expectConsistent("after deleting an object with images", dir, same(ids));
    }
  } finally {
    await server.close();
  }
}

async function concurrency(): Promise<void> {
  begin("concurrent writers, readers and the worker");
  const { dir, index } = await project(20);
  const work: Promise<Run>[] = [];
  for (let i = 0; i < 3; i++) work.push(cli(["--project", dir, "--json", "objects", "add", "-"], { input: `${lines(`c${i}-`, 300)}\n${lines("shared", 100, { writer: i })}` }));
  for (let i = 0; i < 5; i++) work.push(cli(["--project", dir, "--json", "objects", "delete", `base${i}`]));
  for (let i = 0; i < 4; i++) work.push(cli(["--project", dir, "--json", "search", index, "rivers and hills", "--limit", "50"]));
  for (const run of await Promise.all(work)) expectRun(`concurrent ${run.args.slice(3, 5).join(" ")}`, run, [0, 3]);
  await expectConsistent("after concurrent use", dir, (ids) => (ids.length === 20 - 5 + 900 + 100 ? null : `${ids.length} objects stored, 1,015 expected`));
}

const started = Date.now();
try {
  const all: [string, () => Promise<void>][] = [
    ["input", hostileInput],
    ["requests", hostileRequests],
    ["crash-points", killsAtEveryStep],
    ["random-kills", () => randomKills(12)],
    ["state", damagedState],
    ["environment", hostileEnvironment],
    ["concurrency", concurrency],
    ["models", () => models(10)],
    ["images", () => images(6)],
  ];
  // `-- --only models,state` runs some groups only.
  const only = values.only?.split(",");
  for (const [name, run] of all) if (!only || only.includes(name)) await run();
} finally {
  spawnSync("bash", ["-c", `pkill -f "worker-main.js ${root}" || true`]);
  rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

process.stdout.write(`\n\nsemsearch torture run (seed ${values.seed}), ${Math.round((Date.now() - started) / 1000)} s, ${runs.length} commands\n\n`);
process.stdout.write("| group | cases | commands |\n|---|---|---|\n");
const names = [...groups.keys()];
names.forEach((name, i) => {
  const entry = groups.get(name) as { cases: number; commands: number };
  const next = i + 1 < names.length ? (groups.get(names[i + 1] as string) as { commands: number }).commands : runs.length;
  process.stdout.write(`| ${name} | ${entry.cases} | ${next - entry.commands} |\n`);
});
process.stdout.write(`\ncrashes (exit 1, an unsent signal, a hang, or an undocumented exit code): ${crashes.length}\nlost or half-written objects (failed invariants): ${lost.length}\n`);
for (const finding of [...crashes, ...lost]) process.stdout.write(`- [${finding.group}] ${finding.what}\n`);
process.exitCode = crashes.length + lost.length > 0 ? 1 : 0;
