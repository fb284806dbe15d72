/**
 * `PUT|POST /v1/validate/job` ({Job}): Nomad's JobValidateResponse — the job is decoded,
 * canonicalized and validated as a registration would (nothing is written), and what is wrong
 * comes back in the answer (`ValidationErrors`, one per problem, and `Error`), with status 200,
 * as Nomad answers it; only a body that is not a request at all is a 400.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitJob } from '../../server/job-admission.js';
import { ServerError } from '../../server/server-error.js';
import { acl } from '../acl/route-acl.js';
import { objectBody, objectField } from '../request-body.js';
import { queryOptions, sendJson, type RouteContext } from '../route-context.js';

/** Nomad's JobValidateResponse. */
export interface JobValidateResponse {
  DriverConfigValidated: boolean;
  ValidationErrors: string[] | null;
  Error: string;
  Warnings: string;
}

/** The problems listed in a JOB_INVALID message ("…:\n\t* a\n\t* b"), or the message itself. */
export function validationErrors(message: string): string[] {
  const listed = message.split('\n').filter((l) => l.startsWith('\t* ')).map((l) => l.slice(3));
  return listed.length > 0 ? listed : [message];
}

/** Registers /v1/validate/job. */
export function registerJobValidateRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const validate = async (req: FastifyRequest, reply: FastifyReply) => {
    const body = objectBody(req.body);
    const job = objectField(body, 'Job');
    // The server answered, so the job was checked here: Nomad's server sets DriverConfigValidated
    // whenever it answers (its CLI prints "not validated" only when no agent could be reached).
    const out: JobValidateResponse = { DriverConfigValidated: true, ValidationErrors: null, Error: '', Warnings: '' };
    try {
      const limits = ctx.server?.jobLimits?.();
      admitJob(job, { region: ctx.agent.region, namespace: queryOptions(req).namespace, ...(limits ? { limits } : {}) });
      // Driver configs are checked by the drivers when tasks start, not here (as Nomad's servers).
    } catch (err) {
      if (!(err instanceof ServerError) || err.code !== 'JOB_INVALID') throw err;
      out.Error = err.message;
      out.ValidationErrors = validationErrors(err.message);
    }
    return sendJson(reply, out, queryOptions(req).pretty);
  };
  app.put('/v1/validate/job', acl.ns('read-job', 'job-body'), validate);
  app.post('/v1/validate/job', acl.ns('read-job', 'job-body'), validate);
}
