/**
 * How to reach an S3 bucket, read from the standard variables (the AWS SDK's and LanceDB's object
 * store's): AWS_REGION (or AWS_DEFAULT_REGION), AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL for an
 * S3-compatible server, and AWS_ALLOW_HTTP=true to let such an endpoint be plain HTTP. Credentials are
 * not read here: the SDK's chain finds them (AWS_ACCESS_KEY_ID…, profiles, roles). Pure.
 */
import { UsageError } from "../errors.js";

export interface S3Config {
  region: string;
  /** An S3-compatible server's address, or undefined for AWS itself. */
  endpoint?: string;
  /** Path-style addresses (`endpoint/bucket/key`), which S3-compatible servers expect. */
  forcePathStyle: boolean;
  allowHttp: boolean;
}

const truthy = (value: string | undefined) => value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());

export function s3Config(env: Readonly<Record<string, string | undefined>>): S3Config {
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || "us-east-1";
  const allowHttp = truthy(env.AWS_ALLOW_HTTP);
  const given = (env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL)?.trim();
  if (!given) return { region, forcePathStyle: false, allowHttp };
  const name = env.AWS_ENDPOINT_URL_S3 !== undefined ? "AWS_ENDPOINT_URL_S3" : "AWS_ENDPOINT_URL";
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError("INVALID_ENDPOINT", `${name} is not an address: ${JSON.stringify(given.slice(0, 200))}`, { hint: `Set ${name} to the store's address, such as https://s3.example.com or http://127.0.0.1:9000.` });
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UsageError("INVALID_ENDPOINT", `${name} must be an http:// or https:// address, not ${url.protocol}//`, { hint: `Set ${name} to the store's address, such as https://s3.example.com.` });
  }
  if (url.protocol === "http:" && !allowHttp) {
    throw new UsageError("INSECURE_ENDPOINT", `${name} is plain HTTP (${url.origin}), which sends data and signatures unencrypted`, { hint: "Use https://, or set AWS_ALLOW_HTTP=true for a server you trust on a private network." });
  }
  if (url.username || url.password) {
    throw new UsageError("INVALID_ENDPOINT", `${name} holds credentials`, { hint: "Give credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, not in the address." });
  }
  return { region, endpoint: url.origin + url.pathname.replace(/\/+$/, ""), forcePathStyle: true, allowHttp };
}
