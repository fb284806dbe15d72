/**
 * The template hook: before each start, renders the task's templates (embedded `data` or a
 * `source` file in the task directory) into their destinations inside the task directory with
 * their permissions, and adds `env = true` templates to the task's environment. Runs after the
 * env hook (templates read the task env) and the artifact hook (sources may be artifacts).
 * Anything the renderer cannot do fails the task setup with "Template failed: …".
 */
import { relative } from 'node:path';
import { openInside } from '../../../fs/confined-fs.js';
import { writeFileInsideSync } from '../../../fs/confined-write.js';
import type { Template } from '../../../structs/template.js';
import { errorMessage } from '../../client-error.js';
import { parseEnvFile } from '../../template/parse-env-file.js';
import { renderTemplate } from '../../template/render-template.js';
import { resolveInTaskDir } from '../../template/task-path.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { TaskSetupError } from '../task-setup-error.js';

async function renderOne(t: Template, taskDir: string, env: Record<string, string>): Promise<Record<string, string>> {
  let text = t.EmbeddedTmpl;
  if (t.SourcePath) {
    resolveInTaskDir(taskDir, t.SourcePath, 'source');
    try {
      // Opened through the confinement check: the task may have made the source a link to a host file.
      const fh = await openInside(taskDir, t.SourcePath);
      try {
        text = await fh.readFile('utf8');
      } finally {
        await fh.close();
      }
    } catch (err) {
      throw new Error(`cannot read source ${JSON.stringify(t.SourcePath)}: ${errorMessage(err)}`, { cause: err });
    }
  }
  if (!t.DestPath) throw new Error('template has no destination');
  const dest = relative(taskDir, resolveInTaskDir(taskDir, t.DestPath, 'destination'));
  const rendered = renderTemplate(text, { leftDelim: t.LeftDelim, rightDelim: t.RightDelim, env });
  const mode = parseInt(t.Perms || '0644', 8);
  if (!Number.isInteger(mode)) throw new Error(`invalid perms ${JSON.stringify(t.Perms)}`);
  // Never through a link the task planted at the destination (the agent is root); mode set on every render.
  writeFileInsideSync(taskDir, dest, rendered, mode);
  return t.Envvars ? parseEnvFile(rendered) : {};
}

/** Renders templates into the task directory and exports `env = true` templates. */
export class TemplateHook implements PrestartHook {
  readonly name = 'template';

  async prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>> {
    const templates = req.task.Templates ?? [];
    if (templates.length === 0 || !prep.dirs) return {};
    let env = { ...prep.env };
    for (const t of templates) {
      try {
        // Later templates see the variables of earlier env templates, as with Nomad's env merge order.
        env = { ...env, ...(await renderOne(t, prep.dirs.dir, env)) };
      } catch (err) {
        throw new TaskSetupError(`Template failed: ${errorMessage(err)}`, { cause: err });
      }
    }
    return { env };
  }
}
