/**
 * MSGSVC_SMPP_URL (API.md §11.4): `smpp://system_id:password@host:port`, `smpps://` for TLS.
 * Dependency-free so that src/config.ts can validate the setting at start.
 */

/** The parts of MSGSVC_SMPP_URL. */
export interface SmppUrl {
  tls: boolean;
  /** Host name or IP address (IPv6 without brackets). */
  host: string;
  /** Default 2775 (the IANA port for SMPP). */
  port: number;
  systemId: string;
  password: string;
}

/**
 * Parses `smpp://system_id:password@host:port` (`smpps://` for TLS; port default 2775). User and
 * password are percent-decoded; SMPP 3.4 §4.1.1 limits system_id to 15 and password to 8 characters.
 * @throws Error saying what is wrong (config.ts turns it into a ConfigError naming the setting).
 */
export function parseSmppUrl(raw: string): SmppUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('is not a URL (smpp://system_id:password@host:port)');
  }
  if (url.protocol !== 'smpp:' && url.protocol !== 'smpps:') throw new Error(`must start with smpp:// or smpps://, got ${url.protocol}//`);
  if (!url.hostname) throw new Error('has no host');
  const systemId = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (!systemId) throw new Error('has no system_id (smpp://system_id:password@host:port)');
  if (systemId.length > 15) throw new Error('has a system_id longer than 15 characters (SMPP 3.4 §4.1.1)');
  if (password.length > 8) throw new Error('has a password longer than 8 characters (SMPP 3.4 §4.1.1)');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { tls: url.protocol === 'smpps:', host, port: url.port ? Number(url.port) : 2775, systemId, password };
}

/** The URL without its credentials, for logs and /readyz: `smpp://host:port`. */
export function redactSmppUrl(u: SmppUrl): string {
  return `${u.tls ? 'smpps' : 'smpp'}://${u.host.includes(':') ? `[${u.host}]` : u.host}:${u.port}`;
}
