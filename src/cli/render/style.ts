/** Colour policy: off with --no-color, NO_COLOR, or when stdout is not a terminal. */
import chalk from "chalk";

export function configureColor(enabled: boolean | undefined): void {
  const off = enabled === false || (process.env.NO_COLOR ?? "") !== "" || !process.stdout.isTTY;
  if (off) chalk.level = 0;
}

export { chalk };
