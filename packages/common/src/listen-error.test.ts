import { createServer, type Server } from 'node:net';
import { listen } from './http';
import { ADMIN_LISTEN, ListenError } from './listen-error';

const errno = (code: string) => Object.assign(new Error(`listen ${code}`), { code });

describe('ListenError', () => {
  it('when the port is in use, then the message names the variable, the address and port, and what to do', () => {
    const err = ListenError.from(errno('EADDRINUSE'), '127.0.0.1', 8081, { port: 'NOTES_PORT' }) as ListenError;
    expect(err).toBeInstanceOf(ListenError);
    expect(err.message).toBe('NOTES_PORT: port 8081 is already in use on 127.0.0.1 (EADDRINUSE): set NOTES_PORT to a free port, or stop what holds 127.0.0.1:8081');
    expect(err.variable).toBe('NOTES_PORT');
  });

  it('when the user may not bind the port, then the message says privileges and names the variable', () => {
    const err = ListenError.from(errno('EACCES'), '0.0.0.0', 80, { port: 'PORT', host: 'HOST' }) as ListenError;
    expect(err.message).toBe('PORT: not allowed to listen on 0.0.0.0:80 (EACCES; ports below 1024 need privileges): set PORT to a port from 1024 up, or grant the privilege');
  });

  it('when the address is not this machine\'s, then the host variable is the one named', () => {
    const err = ListenError.from(errno('EADDRNOTAVAIL'), '10.9.9.9', 9080, { port: 'ADMIN_PORT', host: 'ADMIN_HOST' }) as ListenError;
    expect(err.variable).toBe('ADMIN_HOST');
    expect(err.message).toMatch(/^ADMIN_HOST: 10\.9\.9\.9 is not an address of this machine .*set ADMIN_HOST to one of its addresses/);
  });

  it('when the error is of another kind, then it passes through untouched', () => {
    const other = errno('EMFILE');
    expect(ListenError.from(other, '127.0.0.1', 1, ADMIN_LISTEN)).toBe(other);
  });

  it('when renamed, then the same refusal names the new variable', () => {
    const err = new ListenError('EADDRINUSE', '127.0.0.1', 9084, ADMIN_LISTEN).renamed({ port: 'WEBHOOKS_ADMIN_PORT' });
    expect(err.message).toMatch(/^WEBHOOKS_ADMIN_PORT: port 9084 .*set WEBHOOKS_ADMIN_PORT to a free port/);
  });
});

describe('listen on a port another server holds', () => {
  let holder: Server;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => { await new Promise((resolve) => holder.close(resolve)); });

  it('rejects with a ListenError naming the variable it was given', async () => {
    const port = (holder.address() as { port: number }).port;
    const refusal = listen((_req: never, _res: never) => undefined, port, '127.0.0.1', undefined, ADMIN_LISTEN);
    await expect(refusal).rejects.toBeInstanceOf(ListenError);
    await expect(refusal).rejects.toMatchObject({ code: 'EADDRINUSE', port, address: '127.0.0.1', variable: 'ADMIN_PORT' });
  });
});
