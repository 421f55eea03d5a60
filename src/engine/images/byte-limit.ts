/** Sizes as limits are written in reasons and messages. No dependencies: the CLI imports it through the façade. */

/** `20 MB`, `64 KB`, `100 bytes`: a size limit for a reason (binary units, as the limits are set). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Number((bytes / 1024 / 1024).toFixed(1))} MB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KB`;
  return `${bytes} bytes`;
}
