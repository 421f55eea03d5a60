/** `semsearch keys create | list | revoke`: the API keys of `semsearch serve`. */
import type { KeyInfo } from "../../engine/index.js";
import { withEngine, type GlobalOptions } from "../options.js";
import { listFormat, note, printResult } from "../output.js";
import { renderKeyTable } from "../render/table.js";

export interface KeysCreateOptions extends GlobalOptions {
  name?: string;
  readOnly?: boolean;
}

export async function keysCreate(options: KeysCreateOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const created = await engine.createKey({ name: options.name, readOnly: options.readOnly });
    // The key alone on stdout, so `KEY=$(semsearch keys create)` works; it is shown this once.
    printResult(options, created, () => `${created.key}\n`);
    note(options, `Created ${created.read_only ? "read-only " : ""}key ${created.id}${created.name ? ` (${created.name})` : ""}. It is shown only now: store it; semsearch keeps only a hash of it.`);
  });
}

export async function keysList(options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const keys: KeyInfo[] = await engine.listKeys();
    printResult(options, { keys }, () => renderKeyTable(keys, listFormat(options)));
  });
}

export async function keysRevoke(id: string, options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const revoked = await engine.revokeKey(id);
    printResult(options, { revoked: revoked.id }, () => `Revoked key ${revoked.id}${revoked.name ? ` (${revoked.name})` : ""}.\n`);
  });
}
