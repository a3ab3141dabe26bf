export interface BucketRanges {
  /** Inclusive minute ranges summed from stats_created_minutes. */
  minutes: Array<readonly [number, number]>;
  /** Inclusive hour range summed from stats_created_hours, if any whole hour lies inside. */
  hours: readonly [number, number] | undefined;
}

/**
 * Splits the minutes [from, to] into whole hours (read from the hour rollup) and the ragged
 * minutes at both ends, so a 30-day window reads at most 720 hour rows and 118 minute rows.
 */
export function bucketRanges(from: number, to: number): BucketRanges {
  if (to < from) return { minutes: [], hours: undefined };
  const firstHour = Math.ceil(from / 60);
  const endHour = Math.floor((to + 1) / 60); // exclusive
  if (firstHour >= endHour) return { minutes: [[from, to]], hours: undefined };
  const minutes: Array<readonly [number, number]> = [];
  if (from < firstHour * 60) minutes.push([from, firstHour * 60 - 1]);
  if (endHour * 60 <= to) minutes.push([endHour * 60, to]);
  return { minutes, hours: [firstHour, endHour - 1] };
}
