import { isbot } from 'isbot';
import type { ClientClass } from '../domain/ports';

/**
 * The coarse class a receipt shows for a fetch of the note page (DECISIONS 12). The user agent is
 * classified and dropped: it is never stored. Bot recognition is isbot's maintained pattern list
 * (link expanders of chat apps and social sites, crawlers, HTTP libraries); anything it calls a
 * bot shows as a link preview bot, since that is what fetches a shared link unasked.
 */
export function classifyClient(userAgent: string | undefined): ClientClass {
  const agent = (userAgent ?? '').trim();
  if (agent === '') return 'other';
  if (isbot(agent)) return 'link_preview_bot';
  return /^Mozilla\/\d/.test(agent) ? 'browser' : 'other';
}

