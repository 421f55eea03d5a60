/** The only importer of @clack/prompts. Prompts answer `null` when the person cancels (Esc, Ctrl+C). */
import { intro, isCancel, outro, select, text } from "@clack/prompts";

export interface Choice<T extends string> {
  value: T;
  label: string;
  hint?: string;
}

export async function choose<T extends string>(message: string, options: Choice<T>[], initial?: T): Promise<T | null> {
  const answer = await select<T>({ message, options: options as never, initialValue: initial, maxItems: 12 });
  return isCancel(answer) ? null : (answer as T);
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

export function begin(title: string): void {
  intro(title);
}

export function end(message: string): void {
  outro(message);
}
