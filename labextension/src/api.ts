/**
 * Calls to the server extension (`{base_url}devknow/api/...`) through ServerConnection, which adds the
 * token and the XSRF header. The key never reaches the browser: only the Jupyter server talks to the service.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** One search hit: the service's shape plus its title, page URL and rendered, sanitized HTML. */
export interface IHit {
  parent: string;
  id: string;
  content: string;
  title: string;
  uri: string;
  html: string;
}

/** Hits for a query (also the answer's quota fallback, with `fallback: true`). */
export interface ISearchReply {
  kind: 'search';
  query: string;
  source?: string | null;
  results: IHit[];
  header_html: string;
  notices: string[];
  fallback?: boolean;
}

/** A whole page. */
export interface IDocument {
  name: string;
  uri: string;
  content: string;
  description: string;
  title: string;
  html: string;
  /** A long page: its sections still to render (placeholders, in order) and the number to ask them with. */
  sections?: { number: number; pending: number[] };
}

export interface ISectionReply {
  name: string;
  index: number;
  html: string;
}

export interface IDocumentsReply {
  documents: IDocument[];
  notices: string[];
}

/** A grounded answer with the names of its references. */
export interface IAnswerReply {
  kind: 'answer';
  answerText: string;
  references: string[];
  query: string;
  extractive: boolean;
  notices: string[];
  html: string;
}

/** Where the server's client points (never the key itself). */
export interface IStatusReply {
  endpoint: string;
  backend: string;
  key_source: string | null;
  version: string;
  stylesheet: string;
  /** Sites the index that answers holds (the site box's suggestions). */
  sites?: string[];
}

/** An error reply of the extension, or of the Jupyter server itself, as one line. */
export class DocsError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly kind: string,
    readonly hint: string | null
  ) {
    super(message);
  }

  /** What the panel shows: the message, then the hint when there is one. */
  get line(): string {
    return this.hint ? `${this.message} ${this.hint}` : this.message;
  }
}

/** `method` on `devknow/api/<path>`, parsed as JSON; throws DocsError with the server's message. */
export async function requestAPI<T>(path: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'devknow', 'api', path);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (reason) {
    throw new DocsError(`The Jupyter server could not be reached (${reason}).`, 0, 'NetworkError', null);
  }
  const text = await response.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = data?.error;
    if (error?.message) {
      throw new DocsError(error.message, response.status, error.type ?? 'Error', error.hint ?? null);
    }
    const message = data?.message || response.statusText || 'request failed';
    throw new DocsError(`The Jupyter server refused the request (${response.status}: ${message}).`, response.status, 'HTTPError', null);
  }
  return data as T;
}

/** Hits for `query`, optionally from one site. With `error`, `query` is an error's output (a traceback, a
 *  compiler message): the server searches for its type, message and libraries, and says the query it made. */
export function search(query: string, source: string, n: number, error = false): Promise<ISearchReply> {
  const params = new URLSearchParams({ query, n: String(n) });
  if (error) {
    params.set('error', '1');
  }
  if (source) {
    params.set('source', source);
  }
  return requestAPI<ISearchReply>(`search?${params.toString()}`);
}

/** Whole pages by name or page URL. */
export function documents(names: string[]): Promise<IDocumentsReply> {
  return requestAPI<IDocumentsReply>('documents', { method: 'POST', body: JSON.stringify({ names }) });
}

/** One section of a long page, rendered (what fills its placeholder). */
export function section(name: string, index: number, number: number): Promise<ISectionReply> {
  return requestAPI<ISectionReply>('section', { method: 'POST', body: JSON.stringify({ name, index, number }) });
}

/** An answer, or hits once the answer quota is used up. */
export function answer(query: string): Promise<IAnswerReply | ISearchReply> {
  return requestAPI<IAnswerReply | ISearchReply>('answer', { method: 'POST', body: JSON.stringify({ query }) });
}

/** The server's endpoint, backend and key source. */
export function status(): Promise<IStatusReply> {
  return requestAPI<IStatusReply>('status');
}
