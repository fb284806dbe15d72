/** Commander helpers for flags that job-file commands share. */

/** Commander option reducer for repeatable flags: collects every value into a list. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
