/**
 * Several messages of one routing key carried by one AMQP message (docs/events.md, Packs). The broker's
 * work (persisting, confirming, routing, delivering and acking a message) and the client's per-message
 * work are paid once per pack; the consumer's bus settles each member on its own, exactly as if it had
 * come alone. A consumer that does not know packs would dead-letter them, so consumers are deployed
 * before publishers that pack.
 */
export const PACK_CONTENT_TYPE = 'application/vnd.vanish.pack+json';

/** Most members in one pack: an outbox relay round (100 rows) fits in one. */
export const MAX_PACK_MEMBERS = 100;

export interface PackMember {
  id: string;
  body: string;
}

/** What one publish sends: a message alone, or a pack of messages of one routing key. */
export type PublishUnit<M extends PackMember & { routingKey: string }> = { alone: M } | { routingKey: string; members: M[] };

/**
 * Groups the messages of one publish: those `packed` answers true for travel in packs of up to
 * MAX_PACK_MEMBERS per routing key (a pack of one goes alone), the others alone, first, in order.
 */
export function packMessages<M extends PackMember & { routingKey: string }>(messages: readonly M[], packed: (message: M) => boolean): Array<PublishUnit<M>> {
  const units: Array<PublishUnit<M>> = [];
  const packs = new Map<string, M[]>();
  for (const m of messages) {
    if (packed(m)) packs.set(m.routingKey, [...(packs.get(m.routingKey) ?? []), m]);
    else units.push({ alone: m });
  }
  for (const [routingKey, pack] of packs) {
    for (let start = 0; start < pack.length; start += MAX_PACK_MEMBERS) {
      const members = pack.slice(start, start + MAX_PACK_MEMBERS);
      units.push(members.length === 1 ? { alone: members[0] } : { routingKey, members });
    }
  }
  return units;
}

export function encodePack(members: readonly PackMember[]): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, members: members.map(({ id, body }) => ({ id, body })) }), 'utf8');
}

/** Throws on anything that is not a version 1 pack of members with a non-empty string id and a string body. */
export function decodePack(content: Buffer): PackMember[] {
  const value = JSON.parse(content.toString('utf8')) as unknown;
  if (typeof value !== 'object' || value === null || (value as { v?: unknown }).v !== 1) throw new Error('not a version 1 pack');
  const members = (value as { members?: unknown }).members;
  if (!Array.isArray(members) || members.length === 0) throw new Error('a pack without members');
  return members.map((member: unknown) => {
    const { id, body } = (member ?? {}) as { id?: unknown; body?: unknown };
    if (typeof id !== 'string' || id === '' || typeof body !== 'string') throw new Error('a pack member without id or body');
    return { id, body };
  });
}
