/**
 * Saved notebooks keep their results: a devknow output whose widget model is not in this page (the notebook
 * was reopened with no kernel, a new kernel, or after a kernel restart) shows its HTML twin, not ipywidgets'
 * "Error displaying widget: model not found" or an endless "Loading widget...".
 *
 * Every devknow output carries the live view (`application/vnd.jupyter.widget-view+json`) beside a sanitized
 * `text/html` twin (plus `text/plain` and `text/markdown` for other frontends). In each notebook, where
 * JupyterLab would pick the widget view of a devknow output, a renderer of ours takes it: when the kernel
 * connection has a comm for the view's model (ipywidgets opens one comm per model, so no comm means no
 * model) it shows the widget as before, else the twin; if the widget manager restores the model later (a
 * page reload while the kernel still runs), the live widget replaces the twin. Other outputs are untouched.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

/** The MIME type of an ipywidgets view. */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';
/** Internal: what a notebook's registry prefers for a devknow output; never written into a file. */
export const RESULT_MIME = 'application/vnd.devknow.result';
// The root element of every devknow HTML twin (render/style.py's ROOT_CLASS).
const OUR_TWIN = /<div class="devknow[\s"]/;
// How long a twin waits for the widget manager to restore its model from a running kernel (page reload).
const RESTORE_WAIT_MS = 30_000;

type Registry = NotebookPanel['content']['rendermime'];
type Bundle = Parameters<Registry['preferredMimeType']>[0];

/** The bundle's HTML twin when it is a devknow output with a widget view, else null. */
export function devknowTwin(bundle: Bundle): string | null {
  const view = bundle[WIDGET_VIEW_MIME] as { model_id?: string } | undefined;
  const html = bundle['text/html'] as unknown;
  const twin = Array.isArray(html) ? html.join('') : html; // nbformat may keep a string as a list of lines
  return view?.model_id && typeof twin === 'string' && OUR_TWIN.test(twin) ? twin : null;
}

/** In `rendermime` (a notebook's), devknow widget outputs render with {@link TwinOrWidget}. */
export function keepResultsReadable(rendermime: Registry, session: ISessionContext): void {
  // Only devknow outputs are taken: every other widget output keeps ipywidgets' own renderer, which the
  // widget manager finds among the output area's children and wires up (ours holds its renderer inside).
  const preferred = rendermime.preferredMimeType.bind(rendermime);
  rendermime.preferredMimeType = (bundle, safe) => {
    const mimeType = preferred(bundle, safe);
    return mimeType === WIDGET_VIEW_MIME && devknowTwin(bundle) !== null ? RESULT_MIME : mimeType;
  };
  rendermime.addFactory(
    {
      safe: false, // as the widget view: untrusted notebooks get the sanitized text/html from JupyterLab itself
      mimeTypes: [RESULT_MIME],
      createRenderer: () =>
        new TwinOrWidget(
          () => rendermime.createRenderer(WIDGET_VIEW_MIME),
          () => rendermime.createRenderer('text/html'),
          session
        )
    },
    0
  );
}

/** The live widget view of a devknow output when its model exists in this page, else its HTML twin. */
export class TwinOrWidget extends Panel implements IRenderMime.IRenderer {
  /** `widget` and `twin` make renderers (the widget one when needed: the manager registers its factory late). */
  constructor(
    private readonly _widget: () => IRenderMime.IRenderer,
    private readonly _twin: () => IRenderMime.IRenderer,
    private readonly _session: ISessionContext
  ) {
    super();
    this.addClass('jp-DevKnow-output');
    // After "More" the view offers the static copy of every hit fetched: it replaces the output's own, so
    // the saved notebook shows what More had shown (the live view is left as it is).
    this.node.addEventListener('devknow-twin', event => {
      const twin = (event as CustomEvent<Record<string, string>>).detail;
      const model = this._model;
      if (model && twin && typeof twin['text/html'] === 'string') {
        model.setData({ data: { ...model.data, ...twin } });
      }
    });
  }

  /** What is on screen now: `'widget'` or `'twin'` (the twin also marks the node with `jp-mod-twin`). */
  get showing(): 'widget' | 'twin' | null {
    return this._showing;
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const modelId = (model.data[WIDGET_VIEW_MIME] as { model_id?: string } | undefined)?.model_id ?? '';
    this._model = model;
    if (this._showing === 'widget' && modelId === this._modelId && this._session.session?.kernel?.hasComm(modelId)) {
      return; // the same live model (its static copy was updated): the widget stays as it is, hits and all
    }
    this._modelId = modelId;
    if (this._session.session?.kernel?.hasComm(modelId)) {
      return this._show(this._widget(), 'widget', model);
    }
    await this._show(this._twin(), 'twin', model);
    // A reload while the kernel runs: the widget manager restores the models from the kernel shortly after
    // the page loads, each with its comm. Then the live widget takes the twin's place.
    const started = Date.now();
    this._timer = window.setInterval(() => {
      if (this._showing !== 'twin' || Date.now() - started > RESTORE_WAIT_MS) {
        window.clearInterval(this._timer);
      } else if (this._session.session?.kernel?.hasComm(modelId)) {
        window.clearInterval(this._timer);
        void this._show(this._widget(), 'widget', model);
      }
    }, 250);
  }

  dispose(): void {
    window.clearInterval(this._timer);
    super.dispose();
  }

  private async _show(renderer: IRenderMime.IRenderer, kind: 'widget' | 'twin', model: IRenderMime.IMimeModel) {
    for (const child of [...this.widgets]) {
      child.dispose();
    }
    this._showing = kind;
    this.toggleClass('jp-mod-twin', kind === 'twin');
    this.addWidget(renderer as Widget);
    await renderer.renderModel(model);
  }

  private _showing: 'widget' | 'twin' | null = null;
  private _timer = 0;
  private _model: IRenderMime.IMimeModel | null = null;
  private _modelId = '';
}
