/**
 * Go's zero time.Time as Nomad's JSON writes it. A time field that is not set is this, never
 * `""`: Nomad's Go structs decode RFC 3339 only, and one `""` in a list breaks the whole list.
 */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
