/**
 * JupyterLab plugin: the "Developer docs" panel, its commands (open, search or ask about the selection,
 * open a page in a tab), palette and context-menu entries, and its settings (hits, site filter, area).
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, ISanitizer, MainAreaWidget } from '@jupyterlab/apputils';
import { CodeEditor } from '@jupyterlab/codeeditor';
import { IEditorTracker } from '@jupyterlab/fileeditor';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { IDocument } from './api';
import { DocsPage, DocsPanel } from './panel';
import { IRenderActions } from './render';
import { keepResultsReadable } from './saved';
import { editorText, pageSelection } from './selection';

const PLUGIN_ID = 'devknow-jupyter:plugin';

/** Command ids. */
export namespace CommandIDs {
  export const open = 'devknow:open';
  export const searchSelection = 'devknow:search-selection';
  export const askSelection = 'devknow:ask-selection';
  export const openTab = 'devknow:open-tab';
  export const searchError = 'devknow:search-error';
}

// An open book: our own drawing, coloured by the theme's icon colour.
const BOOK_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M3 5.5C5.6 4.3 8.6 4.4 11 6v13c-2.4-1.5-5.4-1.6-8-.5z"/>
    <path d="M21 5.5c-2.6-1.2-5.6-1.1-8 .5v13c2.4-1.5 5.4-1.6 8-.5z"/>
  </g>
</svg>`;

export const docsIcon = new LabIcon({ name: 'devknow-jupyter:docs', svgstr: BOOK_SVG });

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Search, read and ask developer documentation in a sidebar; insert code snippets into notebooks.',
  autoStart: true,
  requires: [ISanitizer],
  optional: [ICommandPalette, INotebookTracker, IEditorTracker, ISettingRegistry, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    sanitizer: ISanitizer,
    palette: ICommandPalette | null,
    notebooks: INotebookTracker | null,
    editors: IEditorTracker | null,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const tabs: DocsPage[] = [];
    const actions: IRenderActions = {
      sanitizer,
      openDocument: nameOrUrl => void panel.openDocument(nameOrUrl),
      canInsert: () => !!notebooks?.currentWidget,
      insertCode: code => {
        const current = notebooks?.currentWidget;
        if (!current) {
          return;
        }
        const notebook = current.content;
        NotebookActions.insertBelow(notebook);
        if (notebook.activeCell?.model.type !== 'code') {
          NotebookActions.changeCellType(notebook, 'code');
        }
        notebook.activeCell?.model.sharedModel.setSource(code);
      }
    };
    const panel = new DocsPanel({
      ...actions,
      openInTab: (doc: IDocument) => {
        const page = new DocsPage(doc, actions);
        const tab = new MainAreaWidget({ content: page });
        tab.id = `devknow-page-${Date.now()}`;
        tab.title.icon = docsIcon;
        tab.title.label = page.title.label;
        tab.title.caption = page.title.caption;
        tab.title.closable = true;
        tabs.push(page);
        page.disposed.connect(() => tabs.splice(tabs.indexOf(page), 1));
        app.shell.add(tab, 'main');
        app.shell.activateById(tab.id);
      }
    });
    panel.id = 'devknow-docs';
    panel.title.icon = docsIcon;
    notebooks?.currentChanged.connect(() => {
      panel.updateInsert();
      tabs.forEach(page => page.updateInsert());
    });

    let area: 'left' | 'right' = 'right';
    const place = () => app.shell.add(panel, area, { rank: 650, type: 'Developer docs' });

    // Placing or showing the panel before the layout is restored would be undone by the restorer, which
    // lays out the side bars afterwards (the panel would end up collapsed): every open waits for it.
    let started: Promise<unknown> = app.restored;
    const open = async () => {
      await started;
      if (!panel.isAttached) {
        place();
      }
      app.shell.activateById(panel.id);
    };

    /** The selection in the current notebook cell or file editor (else the word at the cursor). */
    const selection = (): string => {
      const current = app.shell.currentWidget;
      let editor: CodeEditor.IEditor | null | undefined = null;
      if (notebooks?.currentWidget && current === notebooks.currentWidget) {
        editor = notebooks.activeCell?.editor;
      } else if (editors?.currentWidget && current === editors.currentWidget) {
        editor = editors.currentWidget.content.editor;
      }
      return (editor ? editorText(editor, false) : '') || pageSelection() || (editor ? editorText(editor) : '');
    };

    app.commands.addCommand(CommandIDs.open, {
      label: 'Developer docs',
      caption: 'Open the Developer docs panel',
      icon: docsIcon,
      execute: async () => {
        await open();
        panel.focusSearch();
      }
    });
    app.commands.addCommand(CommandIDs.searchSelection, {
      label: 'Search developer docs for selection',
      caption: 'Search the documentation for the selected text or the word at the cursor',
      icon: docsIcon,
      execute: async () => {
        const text = selection();
        await open();
        if (text) {
          await panel.search(text);
        } else {
          panel.focusSearch();
        }
      }
    });
    app.commands.addCommand(CommandIDs.askSelection, {
      label: 'Ask developer docs about selection',
      caption: 'Ask the documentation about the selected text',
      icon: docsIcon,
      execute: async () => {
        const text = selection();
        await open();
        if (text) {
          await panel.ask(text);
        }
      }
    });
    // An error output of a notebook cell: its traceback as JupyterLab shows it (colours already stripped).
    const errorOutput = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]';
    app.commands.addCommand(CommandIDs.searchError, {
      label: 'Search developer docs for this error',
      caption: 'Search the documentation for the error shown in this output (its type, message and libraries)',
      icon: docsIcon,
      execute: async () => {
        const node = app.contextMenuHitTest(element => element.matches(errorOutput));
        await open();
        // The end of a long traceback: the exception's line and the innermost frames (a URL stays short).
        await panel.search((node?.textContent ?? '').slice(-8000), true);
      }
    });
    app.commands.addCommand(CommandIDs.openTab, {
      label: 'Open developer docs page in a tab',
      caption: 'Open the page shown in the Developer docs panel in the main area',
      isEnabled: () => !!panel.currentDocument,
      execute: () => panel.openCurrentInTab()
    });

    const category = 'Developer docs';
    for (const command of Object.values(CommandIDs)) {
      palette?.addItem({ command, category });
    }
    app.contextMenu.addItem({ command: CommandIDs.searchError, selector: errorOutput, rank: 80 });
    for (const selector of ['.jp-Notebook .jp-Cell .jp-Editor', '.jp-FileEditor']) {
      app.contextMenu.addItem({ command: CommandIDs.searchSelection, selector, rank: 80 });
      app.contextMenu.addItem({ command: CommandIDs.askSelection, selector, rank: 81 });
    }

    const applySettings = (settings: ISettingRegistry.ISettings) => {
      panel.hits = (settings.get('hits').composite as number) || 10;
      const wantedArea = settings.get('area').composite === 'left' ? 'left' : 'right';
      if (!panel.source || panel.source === String(settings.get('source').user ?? '')) {
        panel.source = String(settings.get('source').composite ?? '');
      }
      if (wantedArea !== area) {
        area = wantedArea;
        if (panel.isAttached) {
          place(); // moves the panel to the other side
        }
      }
    };

    const ready = settingRegistry
      ? settingRegistry
          .load(PLUGIN_ID)
          .then(settings => {
            applySettings(settings);
            settings.changed.connect(applySettings);
          })
          .catch(reason => console.warn('devknow: settings not loaded, using defaults', reason))
      : Promise.resolve();
    started = Promise.all([app.restored, ready]).then(() => {
      if (!panel.isAttached) {
        place(); // the icon sits in the side bar from the start; the command opens the panel
      }
      restorer?.add(panel, 'devknow-docs');
    });
  }
};

/** Saved notebooks keep their results: devknow outputs whose widget model is gone show their HTML twin. */
const savedResults: JupyterFrontEndPlugin<void> = {
  id: 'devknow-jupyter:saved-results',
  description: 'Show the HTML twin of devknow outputs whose widget model is not in the page (no or a new kernel).',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    // A widget extension runs as each notebook panel is made, before its outputs render.
    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (panel: NotebookPanel) => keepResultsReadable(panel.content.rendermime, panel.sessionContext)
    });
  }
};

export default [plugin, savedResults];
