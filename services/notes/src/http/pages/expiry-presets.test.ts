import { DEFAULT_EXPIRY_PRESETS, parseExpiryPresets } from './expiry-presets';

describe('EXPIRY_PRESETS', () => {
  it('when the default list is read, then each preset knows its length in minutes', () => {
    expect(parseExpiryPresets(DEFAULT_EXPIRY_PRESETS).map((preset) => [preset.value, preset.minutes])).toEqual([
      ['5m', 5], ['1h', 60], ['1d', 1440], ['7d', 10_080], ['30d', 43_200],
    ]);
    expect(parseExpiryPresets(' 2w , 12h ').map((preset) => preset.unit)).toEqual(['week', 'hour']);
    expect(parseExpiryPresets('')).toEqual([]);
  });

  it.each(['5', '0m', '1y', '1d,1d', '366d', '-1h', '5 m'])('when the list holds %p, then it is refused by name', (text) => {
    expect(() => parseExpiryPresets(text)).toThrow(/"/);
  });
});
