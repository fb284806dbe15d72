/**
 * The namespace answers of the API (GET /v1/namespaces, /v1/namespace/:name). Namespaces are
 * implicit in Caravan: "default" always exists, and so does every namespace a job was registered in.
 */

/** Nomad's Namespace object as /v1/namespace(s) answer it. */
export interface ApiNamespace {
  Name: string;
  Description: string;
  Quota: string;
  Capabilities: null;
  NodePoolConfiguration: null;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** The namespace object for `name` (the description Nomad gives the default namespace). */
export function namespaceView(name: string): ApiNamespace {
  return {
    Name: name,
    Description: name === 'default' ? 'Default shared namespace' : '',
    Quota: '',
    Capabilities: null,
    NodePoolConfiguration: null,
    Meta: null,
    CreateIndex: 1,
    ModifyIndex: 1,
  };
}
