import type { Knex } from 'knex';
import { silentLogger } from '@vanish/common';
import { createTestCa, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { startTlsMariaDb, type TlsMariaDb } from '@vanish/testkit/tls-servers';
import { configureKnex } from '../src';

/**
 * MySQL over TLS against a real MariaDB of our own (--ssl-* and --require-secure-transport), with
 * a CA made by the test. The server's certificate names `localhost` only, so dialling 127.0.0.1
 * tells VERIFY_CA (chain only) from VERIFY_IDENTITY (chain and name).
 */
describe('MySQL over TLS (our own MariaDB with a throwaway CA)', () => {
  let ca: TestCertificateAuthority;
  let otherCa: TestCertificateAuthority;
  let server: TlsMariaDb;
  const opened: Knex[] = [];
  const consoleLines: string[] = [];

  const url = (host: string, query: string) => `mysql://${server.user}:${server.password}@${host}:${server.port}/${server.database}${query}`;
  const open = (databaseUrl: string, sslCa?: string) => {
    const knex = configureKnex(databaseUrl, { logger: silentLogger, connectTimeoutMs: 10_000, sslCa });
    opened.push(knex);
    return knex;
  };
  const cipherOf = async (knex: Knex) => {
    const [rows] = (await knex.raw("SHOW SESSION STATUS LIKE 'Ssl_cipher'")) as [Array<{ Value: string }>];
    return rows[0]!.Value;
  };

  beforeAll(async () => {
    // mysql2 prints to the console when given an option it does not know: ours must all be known.
    for (const method of ['log', 'warn', 'error'] as const) {
      jest.spyOn(console, method).mockImplementation((...args: unknown[]) => { consoleLines.push(args.map(String).join(' ')); });
    }
    ca = createTestCa('vanish test CA');
    otherCa = createTestCa('someone else');
    server = await startTlsMariaDb({ caFile: ca.caFile, certificate: ca.issue('localhost', { dns: ['localhost'] }) });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(opened.map((knex) => knex.destroy()));
    jest.restoreAllMocks();
    await server?.stop();
    ca?.remove();
    otherCa?.remove();
  });

  it('when the URL asks for VERIFY_IDENTITY with ssl-ca, then the connection is encrypted and reads and writes work', async () => {
    const knex = open(url('localhost', `?ssl-mode=VERIFY_IDENTITY&ssl-ca=${encodeURIComponent(ca.caFile)}`));
    expect(await cipherOf(knex)).toMatch(/\w/);
    await knex.schema.createTable('tls_probe', (table) => { table.string('value'); });
    await knex('tls_probe').insert({ value: 'over TLS' });
    expect(await knex('tls_probe').select('value')).toEqual([{ value: 'over TLS' }]);
  });

  it('when only DATABASE_SSL_CA is given (no ssl-mode), then identity is verified by default and the connection is encrypted', async () => {
    expect(await cipherOf(open(url('localhost', ''), ca.ca))).toMatch(/\w/);
  });

  it('when the server is trusted through another CA, then the connection is refused', async () => {
    await expect(cipherOf(open(url('localhost', `?ssl-mode=VERIFY_CA&ssl-ca=${encodeURIComponent(otherCa.caFile)}`))))
      .rejects.toThrow(/self[- ]signed|unable to (verify|get)|certificate/i);
  });

  it('when the certificate does not name the host dialled, then VERIFY_IDENTITY refuses and VERIFY_CA (chain only) connects', async () => {
    await expect(cipherOf(open(url('127.0.0.1', '?ssl-mode=VERIFY_IDENTITY'), ca.ca))).rejects.toThrow(/does not match|altnames|Hostname\/IP/i);
    expect(await cipherOf(open(url('127.0.0.1', '?ssl-mode=VERIFY_CA'), ca.ca))).toMatch(/\w/);
  });

  it('when the URL asks for no TLS, then this server (require_secure_transport) refuses: the connections above were encrypted', async () => {
    const verified = open(url('localhost', `?ssl-ca=${encodeURIComponent(ca.caFile)}`));
    const [rows] = (await verified.raw("SHOW GLOBAL VARIABLES LIKE 'require_secure_transport'")) as [Array<{ Value: string }>];
    expect(rows[0]!.Value).toBe('ON');
    await expect(cipherOf(open(url('localhost', '?ssl-mode=DISABLED')))).rejects.toThrow();
  });

  it('when all of the above ran, then neither knex nor mysql2 printed anything on the console (every line is our JSON)', () => {
    expect(consoleLines).toEqual([]);
  });
});
