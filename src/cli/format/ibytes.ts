/**
 * Byte sizes as Nomad's CLI prints them (go-humanize's IBytes): powers of 1024, one decimal
 * below 10 of a unit ("6.3 MiB"), none from 10 up ("256 MiB"), plain bytes below 10 ("7 B").
 */
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** `n` bytes in IBytes form. */
export function iBytes(n: number): string {
  if (n < 10) return `${n} B`;
  const e = Math.min(Math.floor(Math.log(n) / Math.log(1024)), UNITS.length - 1);
  const val = Math.floor((n / 1024 ** e) * 10 + 0.5) / 10;
  return `${val < 10 ? val.toFixed(1) : val.toFixed(0)} ${UNITS[e]}`;
}

/** Mebibytes (what jobs ask for) in IBytes form. */
export function iBytesFromMiB(mib: number): string {
  return iBytes(mib * 1024 * 1024);
}
