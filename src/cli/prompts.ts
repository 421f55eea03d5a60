/** The only importer of @clack/prompts. Prompts answer `null` when the person cancels (Esc, Ctrl+C). */
import { cancel, confirm, intro, isCancel, log, outro, select, selectKey, text } from "@clack/prompts";

export interface Choice<T extends string> {
  value: T;
  label: string;
  hint?: string;
  /** Shown greyed out; cannot be chosen. */
  disabled?: boolean;
}

export async function choose<T extends string>(message: string, options: Choice<T>[], initial?: T): Promise<T | null> {
  const answer = await select<T>({ message, options: options as never, initialValue: initial, maxItems: 12 });
  return isCancel(answer) ? null : (answer as T);
}

/**
 * A menu answered by a single key: each entry's value is its key, shown before its label. Enter takes
 * the first entry, which is also what clack shows as the answer (its `selectKey` submits no value on
 * Enter and displays the first option); the caller decides what a disabled first entry means then.
 */
export async function chooseKey<T extends string>(message: string, options: Choice<T>[]): Promise<T | null> {
  const first = options[0]?.value;
  const answer = await selectKey<T>({ message, options: options as never, initialValue: first });
  if (isCancel(answer)) return null;
  return (answer as T | undefined) ?? first ?? null;
}

export async function ask(message: string, options: { initial?: string; placeholder?: string; validate?: (value: string) => string | undefined } = {}): Promise<string | null> {
  const answer = await text({
    message,
    initialValue: options.initial,
    placeholder: options.placeholder,
    validate: options.validate ? (value) => options.validate?.(value ?? "") : undefined,
  });
  return isCancel(answer) ? null : answer;
}

/** A yes/no question, no by default; null when cancelled. */
export async function confirmed(message: string): Promise<boolean | null> {
  const answer = await confirm({ message, initialValue: false });
  return isCancel(answer) ? null : answer;
}

/** A line inside the session's frame. */
export function say(message: string): void {
  log.info(message);
}

export function begin(title: string): void {
  intro(title);
}

export function end(message: string): void {
  outro(message);
}

/** Closes the session's frame when it stops on an error (the error itself is reported by `main`). */
export function abort(message: string): void {
  cancel(message);
}
