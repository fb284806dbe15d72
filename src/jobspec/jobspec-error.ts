/**
 * Errors of jobspec parsing: every problem found in a file, each naming the file, the field
 * path and (when it can be found in the source text) the line.
 */
import { CaravanError, type CaravanErrorOptions } from '../structs/caravan-error.js';

/** One problem in a job file. */
export interface JobspecProblem {
  /** The file the problem is in ("<input>" for text without a file name). */
  file: string;
  /** 1-based line, when the offending name was found in the source text. */
  line?: number;
  /** Where in the job the problem is, e.g. `job "web": group "api": task "srv"`. */
  path: string;
  /** What is wrong, e.g. `unknown attribute "drivr"`. */
  message: string;
}

/** Renders a problem as `file:line: path: message`. */
export function formatJobspecProblem(p: JobspecProblem): string {
  const where = p.line !== undefined ? `${p.file}:${p.line}` : p.file;
  return p.path ? `${where}: ${p.path}: ${p.message}` : `${where}: ${p.message}`;
}

/** Thrown when a job file cannot be read, is not valid HCL/JSON, or does not fit the jobspec schema. */
export class JobspecParseError extends CaravanError<'JOBSPEC_INVALID'> {
  constructor(
    readonly problems: JobspecProblem[],
    options?: CaravanErrorOptions,
  ) {
    super('JOBSPEC_INVALID', { reason: problems.map(formatJobspecProblem).join('\n') }, options);
    this.name = 'JobspecParseError';
  }
}
