import { ConfigError, EnvReader } from '@vanish/common';
import { readAmqpUrl, readQueueSettings } from './amqp-settings';

const read = <T>(env: Record<string, string>, fn: (reader: EnvReader) => T): T => {
  const reader = new EnvReader(env);
  const value = fn(reader);
  reader.done();
  return value;
};

describe('readAmqpUrl', () => {
  it('when AMQP_URL lists several nodes, then it keeps them all, trimmed, in order', () => {
    expect(read({ AMQP_URL: 'amqp://a:5672, amqp://b:5672 ,amqp://c:5672' }, readAmqpUrl)).toBe('amqp://a:5672,amqp://b:5672,amqp://c:5672');
  });

  it('when AMQP_URLS is set, then it wins over AMQP_URL', () => {
    expect(read({ AMQP_URL: 'amqp://old', AMQP_URLS: 'amqps://a,amqps://b' }, readAmqpUrl)).toBe('amqps://a,amqps://b');
  });

  it('when one of the addresses is not an AMQP URL, then the configuration is refused naming the variable', () => {
    expect(() => read({ AMQP_URLS: 'amqp://a,http://b' }, readAmqpUrl)).toThrow(ConfigError);
    expect(() => read({ AMQP_URLS: 'amqp://a,http://b' }, readAmqpUrl)).toThrow(/AMQP_URLS/);
  });
});

describe('readQueueSettings', () => {
  it('when nothing is set, then queues are quorum in production and classic elsewhere', () => {
    expect(read({ NODE_ENV: 'production' }, readQueueSettings)).toEqual({ type: 'quorum', deliveryLimit: 50 });
    expect(read({}, readQueueSettings)).toEqual({ type: 'classic' });
  });

  it('when AMQP_QUEUE_TYPE and AMQP_DELIVERY_LIMIT are set, then they are used; an unknown type is refused', () => {
    expect(read({ AMQP_QUEUE_TYPE: 'quorum', AMQP_DELIVERY_LIMIT: '7' }, readQueueSettings)).toEqual({ type: 'quorum', deliveryLimit: 7 });
    expect(() => read({ AMQP_QUEUE_TYPE: 'mirrored' }, readQueueSettings)).toThrow(/AMQP_QUEUE_TYPE/);
  });
});
