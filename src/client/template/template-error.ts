/** Why a template could not be rendered. */
import { CaravanError } from '../../structs/caravan-error.js';

/** Why a template could not be rendered; `message` names the offending function or syntax. */
export class TemplateRenderError extends CaravanError<'TEMPLATE_RENDER'> {
  constructor(reason: string) {
    super('TEMPLATE_RENDER', { reason });
    this.name = 'TemplateRenderError';
  }
}
