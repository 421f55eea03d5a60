/** Loopback addresses and names, for `--no-auth` (served only there, and only to those Host names). Pure. */

/** Whether a host to bind, or a Host header's name, is loopback (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  return name === "localhost" || name === "::1" || name === "[::1]" || /^127(\.\d{1,3}){3}$/.test(name);
}

/**
 * Whether a Host header names this machine by a loopback name (with or without a port). A server
 * without keys answers only those: a web page whose name was made to resolve to 127.0.0.1 (DNS
 * rebinding) sends its own name and is refused.
 */
export function isLoopbackHostHeader(header: string | undefined): boolean {
  if (header === undefined) return false;
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(:\d{1,5})?$/i.exec(header.trim());
  return match !== null && isLoopback(match[1] as string);
}
