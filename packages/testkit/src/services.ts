import { canConnect } from './net';

export type ServiceName = 'mariadb' | 'redis' | 'rabbitmq';

interface ServiceInfo {
  host: string;
  port: number;
  label: string;
  start: string;
}

/** The machine's shared servers and the exact commands that start them (machine page node-svc). */
export const SERVICES: Record<ServiceName, ServiceInfo> = {
  mariadb: {
    host: '127.0.0.1',
    port: 3306,
    label: 'MariaDB',
    start: 'start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd',
  },
  redis: {
    host: '127.0.0.1',
    port: 6379,
    label: 'Redis',
    start:
      'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
  },
  rabbitmq: {
    host: '127.0.0.1',
    port: 5672,
    label: 'RabbitMQ',
    start: 'rabbitmq-server -detached',
  },
};

/**
 * A test that needs a real server calls this first: it fails (never skips) with the command that
 * starts the server when nothing answers on its port.
 */
export async function requireService(name: ServiceName, timeoutMs = 2000): Promise<void> {
  const info = SERVICES[name];
  if (await canConnect(info.host, info.port, timeoutMs)) return;
  throw new Error(
    `${info.label} is not reachable on ${info.host}:${info.port}; this test needs it. Start it with: ${info.start}`,
  );
}
