/** Colour policy: off with --no-color, NO_COLOR, or when stdout is not a terminal. */
import chalk from "chalk";

export function configureColor(enabled: boolean | undefined): void {
  const off = enabled === false || (process.env.NO_COLOR ?? "") !== "" || !process.stdout.isTTY;
  if (off) chalk.level = 0;
}

export { chalk };

/**
 * Text from users or files made safe to print on a terminal: control characters (other than line
 * breaks and tabs) and bidirectional overrides are shown as `\u{…}` escapes, so a hostile name in an
 * error message cannot recolour, move or reorder what the terminal shows.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}
