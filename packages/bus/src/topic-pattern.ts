/**
 * AMQP topic matching: words are separated by dots, `*` matches exactly one word and `#` zero
 * or more words. The in-process bus uses it to route like a RabbitMQ topic exchange.
 */
export function topicMatches(pattern: string, routingKey: string): boolean {
  return matchWords(pattern.split('.'), 0, routingKey.split('.'), 0);
}

function matchWords(pattern: readonly string[], p: number, key: readonly string[], k: number): boolean {
  if (p === pattern.length) return k === key.length;
  const word = pattern[p];
  if (word === '#') {
    for (let skip = k; skip <= key.length; skip += 1) {
      if (matchWords(pattern, p + 1, key, skip)) return true;
    }
    return false;
  }
  if (k === key.length) return false;
  if (word === '*' || word === key[k]) return matchWords(pattern, p + 1, key, k + 1);
  return false;
}
