/** Which settings chose where a server listens, so a refusal can name the one to change. */
export interface ListenSettingNames {
  /** The variable that set the port (PORT, ADMIN_PORT; the all-in-one's NOTES_PORT...). */
  port: string;
  /** The variable that set the address, where one did (HOST, ADMIN_HOST); unset where the address is fixed. */
  host?: string;
}

/** The system's refusals an operator fixes by changing a setting, not by reading a stack. */
const SETTING_REFUSALS = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL']);

/**
 * A server could not listen for a reason its settings explain: the port is taken (EADDRINUSE), the user
 * may not bind it (EACCES, ports below 1024), or the address is not this machine's (EADDRNOTAVAIL).
 * Its message is the one line a person needs: the variable, the address and port, and what to do.
 */
export class ListenError extends Error {
  constructor(
    readonly code: string,
    readonly address: string,
    readonly port: number,
    readonly names: ListenSettingNames,
  ) {
    super(explain(code, address, port, names));
    this.name = 'ListenError';
  }

  /** The same refusal under the names the operator actually set (the all-in-one's per-service variables). */
  renamed(names: ListenSettingNames): ListenError {
    return new ListenError(this.code, this.address, this.port, names);
  }

  /** The variable the message tells the operator to change. */
  get variable(): string {
    return this.code === 'EADDRNOTAVAIL' && this.names.host !== undefined ? this.names.host : this.names.port;
  }

  /** A listen error of the kinds above becomes a ListenError; anything else is returned as it came. */
  static from(err: unknown, address: string, port: number, names: ListenSettingNames): unknown {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    return code !== undefined && SETTING_REFUSALS.has(code) ? new ListenError(code, address, port, names) : err;
  }
}

function explain(code: string, address: string, port: number, names: ListenSettingNames): string {
  const where = `${address}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `${names.port}: port ${port} is already in use on ${address} (EADDRINUSE): set ${names.port} to a free port, or stop what holds ${where}`;
    case 'EACCES':
      return `${names.port}: not allowed to listen on ${where} (EACCES; ports below 1024 need privileges): set ${names.port} to a port from 1024 up, or grant the privilege`;
    default:
      return names.host === undefined
        ? `${address} is not an address of this machine (EADDRNOTAVAIL, listening on ${where} for ${names.port})`
        : `${names.host}: ${address} is not an address of this machine (EADDRNOTAVAIL, listening on ${where}): set ${names.host} to one of its addresses, or 0.0.0.0 for all`;
  }
}

/** The names every service reads its ports and address from (its config.ts: PORT, ADMIN_PORT, HOST). */
export const PUBLIC_LISTEN: ListenSettingNames = { port: 'PORT', host: 'HOST' };
export const ADMIN_LISTEN: ListenSettingNames = { port: 'ADMIN_PORT', host: 'HOST' };
