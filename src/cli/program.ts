/** The command tree. Side-effect free: handlers are injected, so tests can check what each command receives. */
import { Command, InvalidArgumentError, Option } from "commander";
import { FIELD_TYPES, MAX_LIMIT, UsageError } from "../engine/index.js";
import { integerArg, keyValueArg, listArg, numberArg, sizeArg } from "./options.js";
import { checkArgumentText, commandPath } from "./argument-text.js";
import type * as demo from "./commands/demo-command.js";
import type * as indexCmds from "./commands/index-commands.js";
import type * as objectsCmds from "./commands/objects-commands.js";
import type * as searchCmd from "./commands/search-command.js";
import type * as modelsCmds from "./commands/models-commands.js";
import type * as workerCmd from "./commands/worker-command.js";
import type * as serveCmd from "./commands/serve-command.js";
import type * as keysCmds from "./commands/keys-commands.js";
import type * as projectCmds from "./commands/project-commands.js";

/**
 * A command's handler, loaded when that command runs: `--help` or `index list` does not load the
 * search code, the prompts or the server (a short command's time is mostly module loading).
 */
function lazy<M, K extends keyof M>(load: () => Promise<M>, name: K): M[K] {
  return (async (...args: unknown[]) => {
    const module = await load();
    return (module[name] as (...a: unknown[]) => Promise<void>)(...args);
  }) as M[K];
}

const demoModule = () => import("./commands/demo-command.js") as Promise<typeof demo>;
const indexModule = () => import("./commands/index-commands.js") as Promise<typeof indexCmds>;
const objectsModule = () => import("./commands/objects-commands.js") as Promise<typeof objectsCmds>;
const searchModule = () => import("./commands/search-command.js") as Promise<typeof searchCmd>;
const modelsModule = () => import("./commands/models-commands.js") as Promise<typeof modelsCmds>;
const workerModule = () => import("./commands/worker-command.js") as Promise<typeof workerCmd>;
const serveModule = () => import("./commands/serve-command.js") as Promise<typeof serveCmd>;
const keysModule = () => import("./commands/keys-commands.js") as Promise<typeof keysCmds>;
const projectModule = () => import("./commands/project-commands.js") as Promise<typeof projectCmds>;

export const handlers = {
  demo: lazy(demoModule, "demoCommand"),
  indexCreate: lazy(indexModule, "indexCreate"),
  indexList: lazy(indexModule, "indexList"),
  indexGet: lazy(indexModule, "indexGet"),
  indexStatus: lazy(indexModule, "indexStatus"),
  indexDelete: lazy(indexModule, "indexDelete"),
  objectsAdd: lazy(objectsModule, "objectsAdd"),
  objectsGet: lazy(objectsModule, "objectsGet"),
  objectsList: lazy(objectsModule, "objectsList"),
  objectsDelete: lazy(objectsModule, "objectsDelete"),
  search: lazy(searchModule, "searchCommand"),
  workerStatus: lazy(workerModule, "workerStatus"),
  workerRun: lazy(workerModule, "workerRun"),
  modelsList: lazy(modelsModule, "modelsList"),
  modelsPull: lazy(modelsModule, "modelsPull"),
  modelsRm: lazy(modelsModule, "modelsRm"),
  serve: lazy(serveModule, "serveCommand"),
  keysCreate: lazy(keysModule, "keysCreate"),
  keysList: lazy(keysModule, "keysList"),
  keysRevoke: lazy(keysModule, "keysRevoke"),
  projectCopy: lazy(projectModule, "projectCopy"),
};
export type Handlers = typeof handlers;

function withGlobals<A extends unknown[]>(fn: (...args: [...A, Record<string, unknown>]) => Promise<void>) {
  return (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const positional = args.slice(0, -2) as A;
    return fn(...positional, withFormat(command.optsWithGlobals(), command.name()));
  };
}

/** `--format json` is `--json`, `--format jsonl` is search's `--jsonl`; table and tsv choose how lists print (output.ts listFormat). */
function withFormat(options: Record<string, unknown>, command: string): Record<string, unknown> {
  const { format } = options;
  if (format === undefined) return options;
  if ((format === "json" && options.jsonl === true) || (format === "jsonl" && options.json === true)) {
    throw new UsageError("CONFLICTING_OPTIONS", `Give --format ${String(format)} or ${format === "json" ? "--jsonl" : "--json"}, not both`);
  }
  if (format === "json") return { ...options, json: true };
  if (format === "jsonl") {
    if (command !== "search") throw new UsageError("USAGE", "--format jsonl is for search (one result per line); use --format json here");
    return { ...options, jsonl: true };
  }
  if (options.json === true || options.jsonl === true) throw new UsageError("CONFLICTING_OPTIONS", `Give ${options.json === true ? "--json" : "--jsonl"} or --format ${String(format)}, not both`);
  return options;
}

function formatArg(value: string): string {
  if (!["table", "tsv", "json", "jsonl"].includes(value)) throw new InvalidArgumentError(`expected table, tsv, json or jsonl, got "${value}"`);
  return value;
}

/** `--wait` (progress on stderr; exit 7 if objects failed) and its `--timeout`. */
function addWaitFlags(command: Command, what: string): Command {
  return command
    .option("--wait", `${what} (progress on stderr; exit 7 if objects failed)`)
    .option("--timeout <seconds>", "with --wait: give up after this long (exit 5)", integerArg);
}

function addFieldRuleFlags(command: Command): Command {
  for (const rule of ["crawlable", "searchable", "filterable"]) {
    command.option(`--${rule} <fields>`, `${rule} fields, comma-separated (allow list)`, listArg);
    command.option(`--${rule}-deny <fields>`, `fields that are never ${rule}, comma-separated`, listArg);
  }
  return command;
}

/** Examples shown at the end of each command's --help, by command path. */
export const EXAMPLES: Record<string, string[]> = {
  semsearch: [
    "semsearch demo                                      # try it on the bundled sample articles",
    "semsearch objects add articles.jsonl",
    "semsearch index create --name docs --searchable title,body --wait",
    'semsearch search docs "how do plants make energy"',
  ],
  demo: ["semsearch demo", 'semsearch demo "why is the sky blue" --limit 3'],
  index: ["semsearch index create --name docs --searchable title,body", "semsearch index list", "semsearch index status docs --wait"],
  "index create": [
    "semsearch index create --name docs --searchable title,body        # prints the new id at once",
    "semsearch index create --highlights --segment-delimiter 'body=\\n\\n' --wait",
    "semsearch index create --filterable category,price --field-type price=float",
    "semsearch --json index create --config body.json                  # the service's {\"configuration\": …} body",
    "semsearch index create --model Xenova/bge-small-en-v1.5 --searchable body   # downloads the model first if needed",
    "semsearch index create --model ./models/my-model --neural-only     # a model folder in transformers.js layout",
    "semsearch index create --type image --searchable caption,photo    # images searched with text (CLIP), captions lexically",
  ],
  "index list": ["semsearch index list", "semsearch --json index list | jq -r '.indexes[].id'"],
  "index get": ["semsearch index get docs", "semsearch --json index get idx_abc --wait"],
  "index status": ["semsearch index status docs", "semsearch index status docs --wait --timeout 600"],
  "index delete": ["semsearch index delete docs"],
  objects: ["semsearch objects add data.jsonl", "semsearch objects get doc-42", "semsearch objects list --limit 20"],
  "objects add": [
    "semsearch objects add articles.jsonl more.json       # JSON Lines, a JSON array, or one object",
    "cat data.jsonl | semsearch objects add               # standard input (or -)",
    "semsearch objects add products.csv --id-field sku    # CSV or TSV: a row per object, the header names its fields",
    "semsearch objects add products.json --id-field sku --wait",
    "semsearch objects add ./notes                         # a folder: Markdown, text, HTML, PDF, CSV, JSON; unchanged files skipped",
    "semsearch objects add ./notes --watch                 # then keep the project in sync with it until Ctrl+C",
    "semsearch objects add ./docs --glob '**/*.md' --exclude 'docs/drafts/**'",
  ],
  "objects get": ["semsearch objects get doc-42", "semsearch --json objects get doc-42 | jq .status"],
  "objects list": ["semsearch objects list --limit 20 --offset 40"],
  "objects delete": ["semsearch objects delete doc-42", "semsearch objects delete --path ./notes/old.md"],
  search: [
    'semsearch search docs "trail running shoes"                         # a page-through in a terminal, a table in a pipe',
    'semsearch search docs "shoes" --filter \'price:<100 AND NOT category:"sale"\' --limit 20',
    'semsearch --json search docs "shoes" --page 2 --object-fields title,price',
    'semsearch search docs "shoes" --all --jsonl | jq -r .id',
    'semsearch search docs "shoes" --result-fields highlights --no-interactive',
  ],
  models: ["semsearch models list", "semsearch models pull Xenova/all-MiniLM-L6-v2", "semsearch models rm Xenova/all-MiniLM-L6-v2"],
  "models list": ["semsearch models list", "semsearch --json models list | jq -r '.models[] | select(.status == \"downloaded\") | .id'"],
  "models pull": [
    "semsearch models pull Xenova/bge-small-en-v1.5              # q8 weights where offered",
    "semsearch models pull Xenova/all-MiniLM-L6-v2 --dtype fp32",
    "SEMSEARCH_MODELS=/mnt/usb/models semsearch models pull Xenova/bge-small-en-v1.5   # then copy that folder to an offline machine",
  ],
  "models rm": ["semsearch models rm Xenova/all-MiniLM-L6-v2", "semsearch models rm Xenova/all-MiniLM-L6-v2 --force   # even if indexes use it"],
  worker: ["semsearch worker status"],
  serve: [
    "semsearch keys create --name laptop && semsearch serve              # http://127.0.0.1:8080, keys required",
    "semsearch serve --no-auth --port 9000                               # loopback only",
    "semsearch serve --host 0.0.0.0 --port 8080 --max-searches 4         # reachable from other machines (keys required)",
  ],
  project: ["semsearch project copy .semsearch s3://my-bucket/search"],
  "project copy": ["semsearch project copy .semsearch s3://my-bucket/search    # move a local project to a bucket", "semsearch project copy s3://my-bucket/search ./backup"],
  keys: ["semsearch keys create --name ci --read-only", "semsearch keys list", "semsearch keys revoke key_abc123def456"],
  "keys create": ["semsearch keys create --name ci      # the key alone on stdout: KEY=$(semsearch keys create)", "semsearch keys create --read-only    # searches and reads only"],
  "keys list": ["semsearch keys list", "semsearch --json keys list | jq -r '.keys[] | select(.revoked_at == null) | .id'"],
  "keys revoke": ["semsearch keys revoke key_abc123def456", "semsearch keys revoke ci    # by name"],
  "worker status": ["semsearch worker status", "semsearch --json worker status"],
  "worker run": ["semsearch worker                                 # index in the foreground until SIGTERM/SIGINT", "semsearch worker --poll-ms 200 2>> worker.log"],
};

export function createProgram(h: Handlers = handlers, version = "0.0.0"): Command {
  const program = new Command("semsearch")
    .description("Local-first semantic search: hybrid full-text + vector search over LanceDB, embeddings computed on this machine.")
    .version(version)
    .option("-p, --project <dir>", "project directory (env SEMSEARCH_PROJECT; default: the nearest .semsearch here or above, else ./.semsearch)")
    .option("--json", "print the service's JSON shapes on stdout, errors and warnings as JSON on stderr")
    .option("--format <format>", "table (the default at a terminal), tsv (the default in a pipe: tab-separated, a header line), json (as --json), jsonl (search)", formatArg)
    .option("--no-color", "no colours (also NO_COLOR, and whenever stdout is not a terminal)")
    .option("--in-process", "search and read in this process even when a running `semsearch serve` of the project could answer")
    // every command's help lists the global flags too (inherited by the commands created below)
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    // (before every command: an argument holding U+FFFD may not be what was typed)
    .hook("preAction", (_program, command) => checkArgumentText(command));

  program
    .command("demo [query...]")
    .description("index the bundled sample articles in a temporary project and search them")
    .option("--limit <n>", "results to show", integerArg)
    .option("--keep", "keep the temporary project (it is removed at the end otherwise)")
    .action(withGlobals(h.demo));

  const index = program.command("index").description("create, inspect and delete indexes");
  const create = addFieldRuleFlags(
    index
      .command("create")
      .description('create an index and build it in the background; prints its id at once ({"id":"idx_…"} with --json)')
      .option("--name <name>", "a unique name, usable wherever the id is (letters, digits, . _ -)")
      .option("--config <file|->", 'the request body {"configuration": {...}} from a file or stdin')
      .addOption(new Option("--type <type>", "index type (text or image)"))
      .option("--highlights", "enable text highlights")
      .option("--neural-only", "vector search only (no lexical part)")
      .option("--model <name>", "embedding model: use (bundled, the default for text), a Hugging Face id such as Xenova/bge-small-en-v1.5, or a model folder (image indexes: a CLIP model, default Xenova/clip-vit-base-patch32)")
      .option("--model-dtype <dtype>", "weights of a Hugging Face model: q8 or fp32 (default: q8 where offered)"),
  )
    .option("--field-type <field=type>", `type of a filterable field (${FIELD_TYPES.join(", ")}); repeatable`, keyValueArg)
    .option("--segment-delimiter <field=regex>", "regular expression starting a new highlight segment; repeatable", keyValueArg)
    .option("--image-fields <fields>", "image indexes: fields whose every value is an image (URL or path), comma-separated (default: values that look like image files or URLs)", listArg);
  addWaitFlags(create, "wait until the index is built").action(withGlobals(h.indexCreate));
  index.command("list").description("list indexes with their state").action(withGlobals(h.indexList));
  addWaitFlags(index.command("get <id>").description("show an index"), "wait until built").action(withGlobals(h.indexGet));
  addWaitFlags(index.command("status <id>").description("counts of objects per state: UPLOADED, PROCESSING, READY, ERROR"), "wait until built").action(
    withGlobals(h.indexStatus),
  );
  index.command("delete <id>").description("delete an index (objects stay in the store)").action(withGlobals(h.indexDelete));

  const objects = program.command("objects").description("add, inspect and delete stored objects");
  const add = objects
    .command("add [files...]")
    .description("add or replace objects from JSON, JSON arrays or JSON Lines files, CSV or TSV files (a row per object), stdin (-), or folders and Markdown, text, HTML, PDF and image files (an object per file)")
    .addOption(new Option("--input-format <format>", "how the inputs are laid out (default: .csv and .tsv files by extension, else JSON)").choices(["json", "csv", "tsv"]))
    .option("--id-field <field>", "field holding the object id (default id); every object must have it")
    .option("--generate-ids", "give objects without an id a random one (without it, an add whose objects have a field that looks like their id, such as sku, is refused)")
    .option("--glob <pattern...>", "in folders, only files whose path matches (e.g. '**/*.md'; paths start with the folder's name)")
    .option("--exclude <pattern...>", "in folders, leave out files and folders whose path matches (as well as what .gitignore and .semsearchignore leave out)")
    .option("--ext <extension...>", "read files with these extensions as plain text (e.g. --ext log rst)")
    .option("--max-file-size <size>", "skip files larger than this (default 10MB; PDFs 5 times as much), e.g. 500KB, 50MB", sizeArg)
    .option("--sync", "also delete the objects of files gone from the folders added")
    .option("--watch", "after adding, keep the project in sync with the folders until Ctrl+C (implies --sync)");
  addWaitFlags(add, "wait until every index has processed them").action(withGlobals(h.objectsAdd));
  objects.command("get <id>").description("show an object and its state in each index").action(withGlobals(h.objectsGet));
  objects
    .command("list")
    .description("list stored objects by id")
    .option("--limit <n>", "objects to list (default 100)", integerArg)
    .option("--offset <n>", "objects to skip", integerArg)
    .action(withGlobals(h.objectsList));
  objects
    .command("delete [ids...]")
    .description("delete objects from the store and every index: ids, - (one per line on stdin) or --filter; all or none")
    .option("--filter <filter>", "delete every object the filter matches (an index's filterable fields, as search --filter)")
    .option("--index <id>", "the index whose fields --filter reads (needed when there are several)")
    .option("--yes", "delete what --filter matches without asking (needed without a terminal)")
    .option("--path <path...>", "delete the objects read from these files, or from every file under these folders (the files may be gone)")
    .action(withGlobals(h.objectsDelete));

  program
    .command("search <index> [query...]")
    .description("search an index")
    .option("--limit <n>", `results per page (default 10, at most ${MAX_LIMIT})`, integerArg)
    .option("--offset <n>", "results to skip", integerArg)
    .option("--page <n>", "page number (offset = limit × (page − 1))", integerArg)
    .option("--object-fields <fields>", "object fields to return: * or a,b (JSON default: id)")
    .option("--filter <filter>", 'only objects matching a filter, e.g. \'price:<20 AND in_stock:true\'')
    .option("--query-file <file>", "read the query from a file (- for standard input; or give - as the query)")
    .option("--filter-file <file>", "read the filter from a file (- for standard input)")
    .option("--result-fields <fields>", "extra result fields: highlights")
    .addOption(new Option("--results-fields <fields>").hideHelp())
    .option("--semantic-ratio <ratio>", "how much meaning counts against words, 0 (lexical only) to 1 (vectors only); default 0.4", numberArg)
    .addOption(new Option("--mode <mode>", "rank with one part only, for diagnosis").choices(["hybrid", "lexical", "vector"]))
    .option("--jsonl", "one JSON result per line (for jq -c and while read)")
    .option("--all", "follow next through every page (up to 10,000 results); with --jsonl, streamed")
    .option("--interactive", "page through results (the default when stdin and stdout are terminals)")
    .option("--no-interactive", "print one page and exit, even in a terminal")
    .action(withGlobals(h.search));

  const models = program.command("models").description("embedding models: list, download ahead, remove");
  models.command("list").description("known, bundled and downloaded models, and the indexes using them").action(withGlobals(h.modelsList));
  models
    .command("pull <id>")
    .description("download a Hugging Face model ahead of use (resumes an interrupted download)")
    .option("--dtype <dtype>", "q8 or fp32 (default: q8 where offered)")
    .option("--revision <rev>", "a commit, branch or tag (default: main, or the newest download)")
    .action(withGlobals(h.modelsPull));
  models
    .command("rm <id>")
    .description("remove a downloaded model (refused while an index of this project uses it)")
    .option("--force", "remove it even if indexes use it")
    .action(withGlobals(h.modelsRm));

  const worker = program.command("worker").description("the indexer: run it in the foreground, or see whether one runs");
  worker
    .command("run", { isDefault: true })
    .description("index in the foreground until SIGTERM/SIGINT (for systemd or a container; commands then start no background worker)")
    .option("--poll-ms <n>", "how often to look for new work, in ms (default 1000)", integerArg)
    .action(withGlobals(h.workerRun));
  worker.command("status").description("whether a worker is running").action(withGlobals(h.workerStatus));

  program
    .command("serve")
    .description("serve the service's HTTP API (/v1/…) and a search page (/) over this project until SIGTERM/SIGINT; prints its URL")
    .option("--host <address>", "address to listen on (default 127.0.0.1)")
    .option("--port <n>", "port (default 8080; 0: any free port)", integerArg)
    .option("--no-auth", "no API keys (only on a loopback address)")
    .option("--max-body-mb <n>", "largest objects request body, in MiB (default 64)", integerArg)
    .option("--max-searches <n>", "searches running at once (default 8)", integerArg)
    .option("--max-queued-searches <n>", "searches waiting beyond those; more get 503 (default 256)", integerArg)
    .option("--image-root <dir>", "image indexes: the one folder whose image files objects added over HTTP may name (default: none, URLs only)")
    .option("--shutdown-timeout <seconds>", "on SIGTERM/SIGINT, wait this long for requests in flight (default 30)", integerArg)
    .option("--log-format <format>", "stderr's log lines: json (the default when stderr is not a terminal) or human")
    .option("--cors-origin <origins>", "web page origins that may call the API from a browser, comma-separated (e.g. https://app.example)", listArg)
    .option("--no-access-log", "no access log lines on stderr")
    .option("--no-local-socket", "do not answer this machine's `semsearch search` on a local socket (they then load the model themselves)")
    .option("--no-worker", "never start a background worker: indexing is left to `semsearch worker` processes (replicas of a shared project)")
    .option("--no-ui", "no search page at / (the API only)")
    .action(withGlobals(h.serve));

  const keys = program.command("keys").description("API keys of `semsearch serve`: create, list, revoke");
  keys
    .command("create")
    .description("create a key and print it (shown only this once; only a hash is kept)")
    .option("--name <name>", "a name to recognise it by")
    .option("--read-only", "search and read only")
    .action(withGlobals(h.keysCreate));
  keys.command("list").description("list keys (ids, names, scopes; never the keys)").action(withGlobals(h.keysList));
  keys.command("revoke <id>").description("revoke a key by id or name: it stops working at once, also in a running server").action(withGlobals(h.keysRevoke));

  const project = program.command("project").description("whole projects: copy one between directories and buckets");
  project
    .command("copy <from> <to>")
    .description("copy a project whole (tables, indexes, keys) to a directory or s3://bucket/prefix that holds nothing; writers wait meanwhile")
    .action(withGlobals(h.projectCopy));

  for (const command of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    command.exitOverride();
    const examples = EXAMPLES[commandPath(command)];
    if (examples) command.addHelpText("after", `\nExamples:\n${examples.map((line) => `  ${line}`).join("\n")}\n`);
  }
  return program;
}
