/**
 * Saved notebooks keep their results: a devknow output whose widget model is not in this page (the notebook
 * was reopened with no kernel, a new kernel, or after a kernel restart) shows its HTML twin, not ipywidgets'
 * "Error displaying widget: model not found" or an endless "Loading widget...".
 *
 * Every devknow output carries the live view (`application/vnd.jupyter.widget-view+json`) beside a sanitized
 * `text/html` twin (plus `text/plain` and `text/markdown` for other frontends). In each notebook, the
 * renderer made for the widget MIME type is wrapped: when the bundle is ours and the kernel connection has
 * no comm for its model (ipywidgets opens one comm per model, so no comm means no model), the twin is shown
 * instead; if the widget manager restores the model later (a page reload while the kernel still runs), the
 * live widget replaces the twin. Other outputs, and ours while their model lives, render exactly as before.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { KernelMessage } from '@jupyterlab/services';
import { Panel, Widget } from '@lumino/widgets';

/** The MIME type of an ipywidgets view. */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';
// The root element of every devknow HTML twin (render/style.py's ROOT_CLASS).
const OUR_TWIN = /<div class="devknow[\s"]/;

type Registry = NotebookPanel['content']['rendermime'];

/** Wrap `rendermime`'s widget-view renderers so that devknow outputs without a live model show their twin. */
export function keepResultsReadable(rendermime: Registry, session: ISessionContext): void {
  // The widget manager replaces the widget-view factory asynchronously (once the session is ready), so the
  // wrap goes around renderer creation, whichever factory is registered when an output renders.
  const create = rendermime.createRenderer.bind(rendermime);
  rendermime.createRenderer = (mimeType: string) => {
    const renderer = create(mimeType);
    return mimeType === WIDGET_VIEW_MIME ? new TwinOrWidget(renderer, () => create('text/html'), session) : renderer;
  };
}

/** The live widget view of a devknow output when its model exists in this page, else its HTML twin. */
export class TwinOrWidget extends Panel implements IRenderMime.IRenderer {
  constructor(
    private readonly _widget: IRenderMime.IRenderer,
    private readonly _twin: () => IRenderMime.IRenderer,
    private readonly _session: ISessionContext
  ) {
    super();
    this.addClass('jp-DevKnow-output');
  }

  /** What is on screen now: `'widget'` or `'twin'` (the twin also marks the node with `jp-mod-twin`). */
  get showing(): 'widget' | 'twin' | null {
    return this._showing;
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const view = model.data[WIDGET_VIEW_MIME] as { model_id?: string } | undefined;
    const html = model.data['text/html'];
    const twin = Array.isArray(html) ? html.join('') : html; // nbformat may keep a string as a list of lines
    const modelId = view?.model_id;
    const kernel = this._session.session?.kernel;
    if (!modelId || typeof twin !== 'string' || !OUR_TWIN.test(twin) || kernel?.hasComm(modelId)) {
      return this._show(this._widget, 'widget', model);
    }
    await this._show(this._twin(), 'twin', model);
    // A reload while the kernel runs: the widget manager asks the kernel for each model's state, and the
    // reply comes on iopub as a comm message with the model's id. Then the live widget can render.
    kernel?.iopubMessage.connect((_, msg: KernelMessage.IIOPubMessage) => {
      const content = msg.content as { comm_id?: string };
      if (this._showing === 'twin' && content.comm_id === modelId && kernel.hasComm(modelId)) {
        void this._show(this._widget, 'widget', model);
      }
    }, this);
  }

  private async _show(renderer: IRenderMime.IRenderer, kind: 'widget' | 'twin', model: IRenderMime.IMimeModel) {
    for (const child of [...this.widgets]) {
      if (child !== renderer) {
        child.parent = null;
        if (child !== this._widget) {
          child.dispose();
        }
      }
    }
    this._showing = kind;
    this.toggleClass('jp-mod-twin', kind === 'twin');
    this.addWidget(renderer as Widget);
    await renderer.renderModel(model);
  }

  dispose(): void {
    if (!this.isDisposed && this._widget.parent !== this) {
      this._widget.dispose(); // not a child while the twin shows, so the Panel would not dispose it
    }
    super.dispose();
  }

  private _showing: 'widget' | 'twin' | null = null;
}
