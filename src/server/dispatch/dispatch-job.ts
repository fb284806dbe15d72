/**
 * Dispatch of a parameterized job, as Nomad's Job.Dispatch: the request is checked against the
 * parent's parameterized block (meta keys required/permitted, payload required/optional/forbidden,
 * payload at most 16 KiB), then a child `<parent>/dispatch-<unix>-<8 hex>` is registered with
 * ParentID set, Dispatched true, the parameterized block cleared, the meta merged over the
 * parent's and the payload (base64) carried in Job.Payload. A repeated idempotency token
 * returns the child it already created.
 */
import type { Job } from '../../structs/index.js';
import { generateId } from '../../structs/index.js';
import { ServerError } from '../server-error.js';
import type { ServerApi } from '../server-api.js';

/** Nomad's limit on a dispatch payload, in bytes (decoded). */
export const DISPATCH_PAYLOAD_SIZE_LIMIT = 16 * 1024;

/** What separates a parameterized parent's ID from its dispatched children's suffix. */
export const DISPATCH_LAUNCH_SUFFIX = '/dispatch-';

/** A decoded dispatch request (the body of POST /v1/job/:id/dispatch). */
export interface DispatchRequest {
  /** The payload, base64 as sent; "" for none. */
  payload: string;
  meta: Record<string, string>;
  idempotencyToken: string;
  /** Optional text put between "dispatch-" and the time in the child's ID. */
  idPrefixTemplate: string;
}

/** The answer to a dispatch, as Nomad's JobDispatchResponse. */
export interface DispatchResult {
  DispatchedJobID: string;
  EvalID: string;
  EvalCreateIndex: number;
  JobCreateIndex: number;
  Index: number;
}

function invalid(message: string): ServerError {
  return new ServerError('DISPATCH_INVALID', { reason: message });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes a dispatch request body; throws ServerError 400 naming the bad field. */
export function parseDispatchBody(body: Record<string, unknown>): DispatchRequest {
  const payload = body['Payload'] ?? '';
  if (typeof payload !== 'string') throw invalid('Payload: must be a base64 string');
  const compact = payload.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1) throw invalid('Payload: is not valid base64');
  const rawMeta = body['Meta'] ?? {};
  if (rawMeta === null || typeof rawMeta !== 'object' || Array.isArray(rawMeta)) throw invalid('Meta: must be an object of strings');
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(rawMeta as Record<string, unknown>)) {
    if (typeof v !== 'string') throw invalid(`Meta[${JSON.stringify(k)}]: must be a string`);
    meta[k] = v;
  }
  const token = body['IdempotencyToken'] ?? '';
  if (typeof token !== 'string') throw invalid('IdempotencyToken: must be a string');
  const template = body['IdPrefixTemplate'] ?? '';
  if (typeof template !== 'string') throw invalid('IdPrefixTemplate: must be a string');
  if (/[\s/]/.test(template)) throw invalid('IdPrefixTemplate: must not contain whitespace or "/"');
  return { payload: compact, meta, idempotencyToken: token, idPrefixTemplate: template };
}

/** Checks a dispatch against the parent job; throws ServerError 400 naming the field or key. */
export function validateDispatch(parent: Job, req: DispatchRequest): void {
  const p = parent.ParameterizedJob;
  if (!p || parent.Dispatched) throw invalid(`Specified job "${parent.ID}" is not a parameterized job`);
  if (parent.Stop) throw invalid(`Specified job "${parent.ID}" is stopped`);
  const size = Buffer.from(req.payload, 'base64').length;
  switch (p.Payload) {
    case 'forbidden':
      if (size > 0) throw invalid('Payload: not permitted by the parameterized job (payload = "forbidden")');
      break;
    case 'required':
      if (size === 0) throw invalid('Payload: not provided but required by the parameterized job (payload = "required")');
      break;
    default:
      break;
  }
  if (size > DISPATCH_PAYLOAD_SIZE_LIMIT) throw invalid(`Payload: exceeds maximum size; ${size} > ${DISPATCH_PAYLOAD_SIZE_LIMIT}`);
  const required = p.MetaRequired ?? [];
  const permitted = new Set([...required, ...(p.MetaOptional ?? [])]);
  const unpermitted = Object.keys(req.meta).filter((k) => !permitted.has(k)).sort();
  if (unpermitted.length > 0) {
    throw invalid(`Meta: dispatch request included unpermitted metadata keys: ${unpermitted.join(', ')}`);
  }
  const missing = required.filter((k) => !(k in req.meta));
  if (missing.length > 0) throw invalid(`Meta: dispatch did not provide required meta keys: ${missing.join(', ')}`);
}

/** The child ID Nomad gives a dispatch: `<parent>/dispatch-[<template>-]<unix>-<8 hex>`. */
export function dispatchedJobId(parentId: string, nowMs: number, template = ''): string {
  const unix = Math.floor(nowMs / 1000);
  const rand = generateId().replace(/-/g, '').slice(0, 8);
  return `${parentId}${DISPATCH_LAUNCH_SUFFIX}${template ? `${template}-` : ''}${unix}-${rand}`;
}

/** The child job of a (validated) dispatch. */
export function dispatchedJob(parent: Job, req: DispatchRequest, nowMs: number): Job {
  const id = dispatchedJobId(parent.ID, nowMs, req.idPrefixTemplate);
  const child: Job = {
    ...structuredClone(parent),
    ID: id,
    Name: id,
    ParentID: parent.ID,
    Dispatched: true,
    ParameterizedJob: null,
    Payload: req.payload === '' ? null : req.payload,
    Meta: { ...(parent.Meta ?? {}), ...req.meta },
    Status: 'pending',
    StatusDescription: '',
  };
  if (req.idempotencyToken) child.DispatchIdempotencyToken = req.idempotencyToken;
  else delete child.DispatchIdempotencyToken;
  return child;
}

/** Dispatches `parentId` through the server's job registration (see the file comment). */
export async function dispatchJob(server: ServerApi, namespace: string, parentId: string, req: DispatchRequest, nowMs: number): Promise<DispatchResult> {
  const parent = server.state.jobById(namespace, parentId);
  if (!parent) throw new ServerError('JOB_NOT_FOUND', { job: parentId });
  validateDispatch(parent, req);
  if (req.idempotencyToken) {
    const existing = server.state
      .jobs(namespace, `${parentId}${DISPATCH_LAUNCH_SUFFIX}`)
      .find((j) => j.ParentID === parentId && j.DispatchIdempotencyToken === req.idempotencyToken && !j.Stop);
    if (existing) {
      return { DispatchedJobID: existing.ID, EvalID: '', EvalCreateIndex: 0, JobCreateIndex: existing.CreateIndex, Index: server.state.latestIndex() };
    }
  }
  const child = dispatchedJob(parent, req, nowMs);
  const res = await server.registerJob(child);
  const stored = server.state.jobById(namespace, child.ID);
  return {
    DispatchedJobID: child.ID,
    EvalID: res.evalId,
    EvalCreateIndex: res.evalCreateIndex,
    JobCreateIndex: stored?.CreateIndex ?? res.index,
    Index: res.index,
  };
}
