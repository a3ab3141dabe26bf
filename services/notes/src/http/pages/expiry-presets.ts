/**
 * EXPIRY_PRESETS: the lengths the create page offers for notes that expire by time (`5m,1h,1d,7d,30d`),
 * next to "custom" (hours typed in). The API is unchanged: a preset is the page's way of filling in
 * the note's lifetime, and the only one that can say less than an hour.
 */
export interface ExpiryPreset {
  /** As the operator wrote it and the form sends it: `5m`, `1h`, `1d`, `7d`. */
  value: string;
  count: number;
  unit: 'minute' | 'hour' | 'day' | 'week';
  minutes: number;
}

const UNITS = { m: ['minute', 1], h: ['hour', 60], d: ['day', 1440], w: ['week', 10_080] } as const;
/** The API's bound for `expiry_time`: 8,760 hours (one year). */
export const MAX_PRESET_MINUTES = 8760 * 60;
export const DEFAULT_EXPIRY_PRESETS = '5m,1h,1d,7d,30d';

export function parseExpiryPresets(text: string): ExpiryPreset[] {
  const presets: ExpiryPreset[] = [];
  for (const part of text.split(',').map((item) => item.trim()).filter(Boolean)) {
    const match = /^([1-9]\d{0,5})([mhdw])$/.exec(part);
    if (!match) throw new Error(`"${part}" is not a length like 5m, 1h, 1d or 2w`);
    const [unit, factor] = UNITS[match[2] as keyof typeof UNITS];
    const count = Number(match[1]);
    const minutes = count * factor;
    if (minutes > MAX_PRESET_MINUTES) throw new Error(`"${part}" is longer than a year (8760h)`);
    if (presets.some((preset) => preset.value === part)) throw new Error(`"${part}" is listed twice`);
    presets.push({ value: part, count, unit, minutes });
  }
  return presets;
}
