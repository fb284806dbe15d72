/**
 * Go's zero time.Time as Nomad's JSON writes it. A time field that is not set is this, never
 * `""`: Nomad's Go structs decode RFC 3339 only, and one `""` in a list breaks the whole list.
 */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * A time as Nomad's JSON writes a Go `time.Time` value: the time, or the zero time where Caravan
 * holds none (null, undefined or ""). For the API's views; the state keeps null for "not set".
 */
export function goTime(t: string | null | undefined): string {
  return t ? t : GO_ZERO_TIME;
}

/** True when `t` says "not set": null, undefined, "" or Go's zero time (as read from the API). */
export function isUnsetTime(t: string | null | undefined): boolean {
  return !t || t === GO_ZERO_TIME;
}
