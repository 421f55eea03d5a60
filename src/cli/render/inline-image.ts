/**
 * Inline images in terminals that show them: the kitty graphics protocol (kitty, Ghostty, WezTerm)
 * and iTerm2's (iTerm2, WezTerm, VS Code's terminal). Pure: the caller decides when a terminal is on
 * the other end; nothing here is ever written to a pipe.
 */

export type InlineProtocol = "kitty" | "iterm";

/** The protocol the terminal in `env` speaks, or null (then no image is shown). SEMSEARCH_INLINE_IMAGES=0 turns images off, =kitty|iterm forces one. */
export function inlineProtocol(env: NodeJS.ProcessEnv): InlineProtocol | null {
  const forced = env.SEMSEARCH_INLINE_IMAGES;
  if (forced === "0" || forced === "off") return null;
  if (forced === "kitty" || forced === "iterm") return forced;
  if (env.TERM === "dumb") return null;
  if (env.KITTY_WINDOW_ID || env.TERM === "xterm-kitty" || env.TERM_PROGRAM === "ghostty") return "kitty";
  if (env.TERM_PROGRAM === "iTerm.app" || env.TERM_PROGRAM === "WezTerm" || env.LC_TERMINAL === "iTerm2") return "iterm";
  return null;
}

/** Payload bytes per kitty escape sequence (the protocol's limit is 4,096 base64 characters). */
const KITTY_CHUNK = 4096;

/** The escape sequences that show a PNG `columns` cells wide, then a newline. */
export function inlineImage(png: Uint8Array, protocol: InlineProtocol, columns: number): string {
  const data = Buffer.from(png).toString("base64");
  if (protocol === "iterm") {
    return `\u001b]1337;File=inline=1;size=${png.length};width=${columns};preserveAspectRatio=1:${data}\u0007\n`;
  }
  const parts: string[] = [];
  for (let start = 0; start < data.length; start += KITTY_CHUNK) {
    const chunk = data.slice(start, start + KITTY_CHUNK);
    const more = start + KITTY_CHUNK < data.length ? 1 : 0;
    const keys = start === 0 ? `a=T,f=100,q=2,c=${columns},m=${more}` : `m=${more}`;
    parts.push(`\u001b_G${keys};${chunk}\u001b\\`);
  }
  return `${parts.join("")}\n`;
}
